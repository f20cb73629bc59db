package ingress

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/metrics"
	"github.com/slipwayhq/slipway/runtime/ingress/internal/h1"
)

// BenchmarkProxy measures one proxied GET through the gateway's servers
// (with metrics, as the gateway runs) to a loopback backend, with
// keep-alive on both sides: the event loops (the plain-HTTP listeners),
// the goroutine HTTP/1 server (a connection an event loop handed over)
// and that server over TLS 1.3 (the HTTPS listener). The client and
// the backend speak HTTP/1.1 on raw connections and allocate nothing per
// request, so allocs/op and B/op are the gateway's own (and TLS's): the
// numbers to watch while tuning, with cpu-ns/op (the process's CPU time
// per request); ns/op depends on the machine's load.
func BenchmarkProxy(b *testing.B) {
	backendLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer backendLn.Close()
	go rawBackend(backendLn, "Content-Type: text/plain\r\nContent-Length: 23\r\n\r\nhello from the backend\n")

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	p := NewProxy(b.Context(), log, &staticResolver{hosts: map[string][]string{"web": {"127.0.0.1"}}})
	p.ObserveWith(metrics.New(nil))
	if err := p.SetTable(Table{Version: 1, Routes: []Route{{Hostname: "bench.example.com", Visibility: VisibilityPublic,
		Backend: &Backend{Service: "web", Port: backendLn.Addr().(*net.TCPAddr).Port}}}}); err != nil {
		b.Fatal(err)
	}
	srv := newServer(p, log)
	go srv.serve()
	defer srv.shutdown(b.Context())
	cert := selfSigned(b, "bench.example.com")
	servers := map[string]func(net.Listener){
		"event loop": func(ln net.Listener) {
			loops := newLoopServer(p, log, srv)
			if loops == nil {
				b.Skip("no event loops on this system")
			}
			if err := loops.add(ln, ListenerHTTP, false); err != nil {
				b.Fatal(err)
			}
			if err := loops.start(); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { loops.shutdown(context.Background()) })
		},
		"http1 server": func(ln net.Listener) { go acceptPlain(ln, ListenerHTTP, srv) },
		"tls": func(ln net.Listener) {
			go srv.serveTLS(ln, &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}})
		},
	}
	request := []byte("GET / HTTP/1.1\r\nHost: bench.example.com\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n")
	for _, name := range []string{"event loop", "http1 server", "tls"} {
		b.Run(name, func(b *testing.B) {
			gwLn, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer gwLn.Close()
			servers[name](gwLn)
			b.ReportAllocs()
			cpu0 := processCPU()
			b.RunParallel(func(pb *testing.PB) {
				conn, err := net.Dial("tcp", gwLn.Addr().String())
				if err != nil {
					b.Error(err)
					return
				}
				if name == "tls" {
					conn = tls.Client(conn, &tls.Config{InsecureSkipVerify: true, ServerName: "bench.example.com"})
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

// selfSigned returns a self-signed ECDSA P-256 certificate for name.
func selfSigned(tb testing.TB, name string) tls.Certificate {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: []string{name}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
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

// BenchmarkRequestHead measures what the forwarding core does to a
// typical browser request's head on the way to the backend, in both ways
// of serving it: HTTP/1 (the event loops and the HTTP/1 server, from the
// parsed bytes) and HTTP/2 (net/http, from the parsed request).
func BenchmarkRequestHead(b *testing.B) {
	const request = "GET /assets/app.js?v=3 HTTP/1.1\r\nHost: bench.example.com\r\n" +
		"User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n" +
		"Accept: */*\r\nAccept-Language: en-US,en;q=0.5\r\nAccept-Encoding: gzip, deflate, br\r\n" +
		"Referer: http://bench.example.com/\r\nCookie: session=abc123; theme=dark\r\nX-Forwarded-For: 6.6.6.6\r\n" +
		"Sec-Fetch-Dest: script\r\nSec-Fetch-Mode: no-cors\r\nSec-Fetch-Site: same-origin\r\n\r\n"
	peer := netip.MustParseAddr("10.0.0.7")
	b.Run("HTTP/1", func(b *testing.B) {
		var r h1.Request
		var out []byte
		var fw forwarding
		raw := []byte(request)
		b.ReportAllocs()
		for b.Loop() {
			if err := h1.ParseRequest(raw, maxHeaderBytes, &r); err != nil {
				b.Fatal(err)
			}
			fw = forwarding{peer: peer, priorFor: fw.priorFor[:0]}
			out, _ = appendBackendHead(out[:0], raw, &r, &fw, false)
		}
	})
	b.Run("HTTP/2", func(b *testing.B) {
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(request)))
		if err != nil {
			b.Fatal(err)
		}
		var out []byte
		b.ReportAllocs()
		for b.Loop() {
			fw := forwarding{peer: peer}
			out, _ = appendRequestHead(out[:0], req, &fw, req.RequestURI)
		}
	})
}
