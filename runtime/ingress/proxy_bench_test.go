package ingress

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/metrics"
	"github.com/valyala/fasthttp"
)

// BenchmarkProxy measures one proxied GET through the real handler (with
// metrics, as the gateway runs), balancer and backend client to a loopback
// backend, with keep-alive on both sides: net/http (the TLS listener's
// server and ReverseProxy) and fasthttp (the plain-HTTP listeners'). The
// client and the backend speak HTTP/1.1 on raw connections and allocate
// nothing per request, so allocs/op and B/op are the gateway's own: the
// numbers to watch while tuning, with cpu-ns/op (the process's CPU time
// per request); ns/op depends on the machine's load.
func BenchmarkProxy(b *testing.B) {
	backendLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer backendLn.Close()
	go rawBackend(backendLn, "Content-Type: text/plain\r\nContent-Length: 23\r\n\r\nhello from the backend\n")

	p := NewProxy(b.Context(), slog.New(slog.NewTextHandler(io.Discard, nil)), &staticResolver{hosts: map[string][]string{"web": {"127.0.0.1"}}})
	p.ObserveWith(metrics.New(nil))
	if err := p.SetTable(Table{Version: 1, Routes: []Route{{Hostname: "bench.example.com", Visibility: VisibilityPublic,
		Backend: &Backend{Service: "web", Port: backendLn.Addr().(*net.TCPAddr).Port}}}}); err != nil {
		b.Fatal(err)
	}
	servers := map[string]func(net.Listener) (stop func()){
		"net/http": func(ln net.Listener) func() {
			gw := &http.Server{Handler: p.Handler(ListenerHTTP)}
			go gw.Serve(ln)
			return func() { gw.Close() }
		},
		"fasthttp": func(ln net.Listener) func() {
			gw := p.newFastServer(ListenerHTTP, newHandoff(ln.Addr()), false)
			go gw.Serve(ln)
			// Shutdown would wait for the clients' idle connections.
			return func() { ln.Close() }
		},
	}
	request := []byte("GET / HTTP/1.1\r\nHost: bench.example.com\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n")
	for _, name := range []string{"net/http", "fasthttp"} {
		b.Run(name, func(b *testing.B) {
			gwLn, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer servers[name](gwLn)()
			b.ReportAllocs()
			cpu0 := processCPU()
			b.RunParallel(func(pb *testing.PB) {
				conn, err := net.Dial("tcp", gwLn.Addr().String())
				if err != nil {
					b.Error(err)
					return
				}
				defer conn.Close()
				br := bufio.NewReader(conn)
				for pb.Next() {
					if _, err := conn.Write(request); err != nil {
						b.Error(err)
						return
					}
					if err := readRawResponse(br); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			// The process's CPU time, the raw client's and backend's
			// included (a small, fixed share): less sensitive to other load
			// on the machine than ns/op.
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU returns the user and system time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rawBackend answers every request on ln's connections with 200 and the
// given headers and body, allocating nothing per request. Requests must
// have no body.
func rawBackend(ln net.Listener, rest string) {
	response := []byte("HTTP/1.1 200 OK\r\n" + rest)
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			br := bufio.NewReader(c)
			for {
				for {
					line, err := br.ReadSlice('\n')
					if err != nil {
						return
					}
					if len(line) <= 2 {
						break
					}
				}
				if _, err := c.Write(response); err != nil {
					return
				}
			}
		}()
	}
}

var errNot200 = errors.New("response status is not 200")

// readRawResponse reads one response with a Content-Length from br.
func readRawResponse(br *bufio.Reader) error {
	status, err := br.ReadSlice('\n')
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(status, []byte("HTTP/1.1 200 ")) {
		return errNot200
	}
	length := 0
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(line) <= 2 {
			break
		}
		if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
			length, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
		}
	}
	_, err = br.Discard(length)
	return err
}

// BenchmarkHeaderRewrite measures what the fast path does to a typical
// browser request's and a typical response's headers: hop-by-hop headers,
// the client's forwarding headers and Expect out, the gateway's in.
func BenchmarkHeaderRewrite(b *testing.B) {
	const request = "GET /assets/app.js?v=3 HTTP/1.1\r\nHost: bench.example.com\r\n" +
		"User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n" +
		"Accept: */*\r\nAccept-Language: en-US,en;q=0.5\r\nAccept-Encoding: gzip, deflate, br\r\n" +
		"Referer: http://bench.example.com/\r\nCookie: session=abc123; theme=dark\r\n" +
		"Sec-Fetch-Dest: script\r\nSec-Fetch-Mode: no-cors\r\nSec-Fetch-Site: same-origin\r\n\r\n"
	const response = "HTTP/1.1 200 OK\r\nContent-Type: text/javascript\r\nContent-Length: 23\r\n" +
		"Cache-Control: public, max-age=3600\r\nEtag: \"abc\"\r\nLast-Modified: Mon, 30 Nov 2026 03:00:00 GMT\r\n" +
		"Date: Mon, 30 Nov 2026 03:00:00 GMT\r\nVary: Accept-Encoding\r\n\r\n"
	var reqHead fasthttp.RequestHeader
	var respHead fasthttp.ResponseHeader
	if err := reqHead.Read(bufio.NewReader(strings.NewReader(request))); err != nil {
		b.Fatal(err)
	}
	if err := respHead.Read(bufio.NewReader(strings.NewReader(response))); err != nil {
		b.Fatal(err)
	}
	client := net.IPv4(10, 0, 0, 7)
	// "copy" is the share of copying the parsed headers in, which both
	// sub-benchmarks do.
	for _, rewrite := range []bool{false, true} {
		b.Run(map[bool]string{false: "copy", true: "copy+rewrite"}[rewrite], func(b *testing.B) {
			var req fasthttp.Request
			var resp fasthttp.Response
			b.ReportAllocs()
			for b.Loop() {
				reqHead.CopyTo(&req.Header)
				respHead.CopyTo(&resp.Header)
				if rewrite {
					stripHopHeaders(&req.Header)
					setForwarded(&req, client)
					stripHopHeaders(&resp.Header)
				}
			}
		})
	}
}
