package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"sync"
	"time"
)

// The Go load generators, for what wrk cannot do: HTTP/2, and a new TLS
// connection per request without session resumption. The same client
// measures nginx and the gateway.

// goLoad runs workers goroutines for d, each calling do again and again,
// and sums up what they measured: do returns the response's status, or
// an error for a request that failed.
func goLoad(ctx context.Context, workers int, d time.Duration, do func(ctx context.Context, worker int) (int, error)) Result {
	start := time.Now()
	end := start.Add(d)
	ctx, cancel := context.WithDeadline(ctx, end)
	defer cancel()
	lats := make([][]time.Duration, workers)
	counts := make([]struct{ ok, non2xx, errs int64 }, workers)
	errKinds := make([]map[string]int, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			// By the clock, not ctx.Err(): on a busy machine the context's
			// timer can fire well after a socket's deadline (the same
			// instant), and requests failing in between are the run's
			// end, not errors.
			for time.Now().Before(end) {
				t0 := time.Now()
				status, err := do(ctx, w)
				switch {
				case !time.Now().Before(end):
					return // cut off by the end of the run: not counted
				case err != nil:
					counts[w].errs++
					if errKinds[w] == nil {
						errKinds[w] = map[string]int{}
					}
					errKinds[w][errKind(err)]++
				case status/100 != 2:
					counts[w].non2xx++
				default:
					counts[w].ok++
					lats[w] = append(lats[w], time.Since(t0))
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	var r Result
	var all []time.Duration
	for w := range workers {
		r.requests += counts[w].ok
		r.Non2xx += int(counts[w].non2xx)
		r.ErrCount += int(counts[w].errs)
		for k, n := range errKinds[w] {
			if r.Errors == nil {
				r.Errors = map[string]int{}
			}
			r.Errors[k] += n
		}
		all = append(all, lats[w]...)
	}
	r.ReqPerS = float64(r.requests) / elapsed.Seconds()
	if len(all) > 0 {
		slices.Sort(all)
		r.P99 = all[len(all)*99/100]
	}
	return r
}

// clientTLS is the TLS configuration of the Go clients: TLS 1.3 with
// X25519 key exchange (what nginx's OpenSSL offers too; Go would
// otherwise prefer a post-quantum hybrid only the gateway speaks) and no
// session tickets, so every connection is a full handshake. The
// certificate is verified once, when the proxies are checked at the
// start; the load clients skip it, leaving the CPU to the proxies.
func clientTLS(protos ...string) *tls.Config {
	return &tls.Config{
		ServerName:         benchTLSHost,
		MinVersion:         tls.VersionTLS13,
		CurvePreferences:   []tls.CurveID{tls.X25519},
		NextProtos:         protos,
		InsecureSkipVerify: true,
	}
}

// h2Load keeps conns HTTP/2 connections to addr, each with streams
// requests in flight, for d.
func h2Load(ctx context.Context, addr string, conns, streams int, d time.Duration) Result {
	clients := make([]*http.Client, conns)
	for i := range clients {
		tr := &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, network, addr)
			},
			TLSClientConfig:     clientTLS("h2"),
			ForceAttemptHTTP2:   true,
			MaxConnsPerHost:     1,
			MaxIdleConnsPerHost: streams,
		}
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetHTTP2(true)
		defer tr.CloseIdleConnections()
		clients[i] = &http.Client{Transport: tr}
	}
	return goLoad(ctx, conns*streams, d, func(ctx context.Context, w int) (int, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+benchTLSHost+"/", nil)
		resp, err := clients[w%conns].Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return 0, err
		}
		if resp.ProtoMajor != 2 {
			return 0, fmt.Errorf("%s, not HTTP/2", resp.Proto)
		}
		return resp.StatusCode, nil
	})
}

// handshakeLoad has workers open new TLS connections to addr for d: a
// full handshake, one request with Connection: close, its response to
// the end (the proxy closes, so the TIME-WAIT states are the proxy's and
// the client does not run out of ports) and the close.
func handshakeLoad(ctx context.Context, addr string, workers int, d time.Duration) Result {
	cfg := clientTLS("http/1.1")
	req := "GET / HTTP/1.1\r\nHost: " + benchTLSHost + "\r\nConnection: close\r\n\r\n"
	return goLoad(ctx, workers, d, func(ctx context.Context, _ int) (int, error) {
		var dl net.Dialer
		raw, err := dl.DialContext(ctx, "tcp", addr)
		if err != nil {
			return 0, err
		}
		c := tls.Client(raw, cfg)
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if err := c.HandshakeContext(ctx); err != nil {
			return 0, err
		}
		if _, err := io.WriteString(c, req); err != nil {
			return 0, err
		}
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		// Wait for the proxy's close.
		io.Copy(io.Discard, br)
		return resp.StatusCode, nil
	})
}

// errKind is an error without the addresses and ports in it, to count
// errors by kind.
func errKind(err error) string {
	return addrs.ReplaceAllString(err.Error(), "ADDR")
}

var addrs = regexp.MustCompile(`[0-9.]+:[0-9]+`)
