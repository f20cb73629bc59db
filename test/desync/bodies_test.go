package desync

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSlowBody_CutOff sends part of a request body and then nothing,
// keeping the connection open. The proxy must give up within its body
// idle timeout (set to bodyIdle for the tests): close the client's
// connection (an answer such as 408 first is fine) and end the request
// to the backend, which sees its body break off, if it got the request
// at all (a proxy may buffer the body first).
func TestSlowBody_CutOff(t *testing.T) {
	const sent = 20000
	shapes := []struct{ name, via, framing string }{
		{"Content-Length", "http", "Content-Length: 100000\r\n\r\n"},
		{"Content-Length under 8 KiB", "http", "Content-Length: 8000\r\n\r\n"},
		{"chunked", "http", "Transfer-Encoding: chunked\r\n\r\n186a0\r\n"},
		{"Content-Length over TLS", "https", "Content-Length: 100000\r\n\r\n"},
		{"Content-Length over HTTP/2", "h2", ""},
	}
	// What the idle timeout may take beyond itself on a busy machine.
	const slack = 4 * time.Second
	forEachProxy(t, func(t *testing.T, p *proxy) {
		for _, shape := range shapes {
			t.Run(shape.name, func(t *testing.T) {
				t.Parallel()
				tok := token(t)
				path := "/echo/" + tok
				n := sent
				if strings.Contains(shape.framing, "8000") {
					n = 4000
				}
				var stalled time.Time
				if shape.via == "h2" {
					pr, pw := io.Pipe()
					defer pw.Close()
					req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "https://"+hostTLS+path, pr)
					req.ContentLength = 100000
					done := make(chan error, 1)
					go func() {
						// A reset stream (an error) is cut off too.
						resp, err := p.h2(t, "").Do(req)
						if err == nil {
							resp.Body.Close()
							if resp.StatusCode < 400 {
								done <- fmt.Errorf("%s", resp.Status)
								return
							}
						}
						done <- nil
					}()
					pw.Write([]byte(strings.Repeat("s", n)))
					stalled = time.Now()
					select {
					case err := <-done:
						if err != nil {
							t.Errorf("a stalled body got %v", err)
						}
					case <-time.After(bodyIdle + slack):
						t.Errorf("the stream was still open %s after the body stalled (body idle timeout %s)", time.Since(stalled).Round(time.Second), bodyIdle)
					}
				} else {
					host := hostApp
					if shape.via == "https" {
						host = hostTLS
					}
					cl := p.dial(t, shape.via, host, "")
					cl.write("POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\n" + shape.framing + strings.Repeat("s", n))
					stalled = time.Now()
					got, end := cl.until(bodyIdle+slack, nil)
					if end != endClosed {
						t.Errorf("the connection was still open %s after the body stalled (body idle timeout %s); answers %v", time.Since(stalled).Round(time.Second), bodyIdle, got)
					}
					for _, r := range got {
						if r.status < 400 {
							t.Errorf("a stalled body was answered %v", r)
						}
					}
				}
				t.Logf("cut off %s after the body stalled", time.Since(stalled).Round(10*time.Millisecond))
				checkReleased(t, p.app, tok, slack)
			})
		}
	})
}

// checkReleased checks that the request for tok, if it reached b, ended
// there within d with its body broken off: the backend connection is no
// longer held for it.
func checkReleased(t *testing.T, b *backend, tok string, d time.Duration) {
	t.Helper()
	if _, ok := b.request(tok, 0); !ok {
		return
	}
	var r received
	b.waitFor(d, func() bool {
		for _, x := range b.reqs {
			if strings.Contains(x.Target, tok) {
				r = *x
				return x.BodyDone
			}
		}
		return false
	})
	switch {
	case !r.BodyDone:
		t.Errorf("the backend was still reading the body (%d bytes so far) %s after the client was cut off: its connection is held", len(r.Body), d)
	case r.BodyErr == nil:
		t.Errorf("the backend's request ended cleanly with %d bytes of body; it should have broken off", len(r.Body))
	}
}

// TestBodyLimit_413 sends bodies over the limit (maxBody for the tests):
// the proxy answers 413 and the backend gets no more than the limit
// (nothing, when the Content-Length says it all). A body of exactly the
// limit passes, so the check tells the two apart.
func TestBodyLimit_413(t *testing.T) {
	chunked := func(n int) string {
		var b strings.Builder
		piece := strings.Repeat("L", 64<<10)
		for ; n > 0; n -= len(piece) {
			fmt.Fprintf(&b, "%x\r\n%s\r\n", len(piece), piece)
		}
		return b.String() + "0\r\n\r\n"
	}
	cases := []struct {
		name, via string
		length    int  // the body's length
		chunked   bool // sent chunked, else under a Content-Length
		want      int
	}{
		{"Content-Length at the limit", "http", maxBody, false, 200},
		{"Content-Length over the limit", "http", maxBody + 1, false, 413},
		{"chunked over the limit", "http", maxBody + 64<<10, true, 413},
		{"Content-Length over the limit over TLS", "https", maxBody + 1, false, 413},
		{"Content-Length over the limit over HTTP/2", "h2", maxBody + 1, false, 413},
	}
	forEachProxy(t, func(t *testing.T, p *proxy) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				tok := token(t)
				path := "/echo/" + tok
				status := 0
				if tc.via == "h2" {
					req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "https://"+hostTLS+path, strings.NewReader(strings.Repeat("L", tc.length)))
					resp, err := p.h2(t, "").Do(req)
					if err != nil {
						t.Fatalf("HTTP/2: %v", err)
					}
					resp.Body.Close()
					status = resp.StatusCode
				} else {
					host := hostApp
					if tc.via == "https" {
						host = hostTLS
					}
					cl := p.dial(t, tc.via, host, "")
					head := "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\n"
					body := strings.Repeat("L", tc.length)
					if tc.chunked {
						head, body = head+"Transfer-Encoding: chunked\r\n\r\n", chunked(tc.length)
					} else {
						head += fmt.Sprintf("Content-Length: %d\r\n\r\n", tc.length)
					}
					// The proxy may answer before the body is all sent.
					go cl.write(head + body)
					r, err := cl.next(15 * time.Second)
					if err != nil {
						t.Fatalf("no answer: %v", err)
					}
					status = r.status
				}
				if status != tc.want {
					t.Errorf("status %d, want %d", status, tc.want)
				}
				if tc.want == 200 {
					if r, ok := p.app.request(tok, 0); !ok || len(r.Body) != tc.length {
						t.Errorf("the backend did not receive the whole body of %d bytes", tc.length)
					}
					return
				}
				for _, r := range p.app.requests(tok) {
					if !tc.chunked || len(r.Body) > maxBody {
						t.Errorf("the backend received %d bytes of a body over the limit", len(r.Body))
					}
				}
				if tc.chunked {
					// Streamed up to the limit, the body must break off.
					checkReleased(t, p.app, tok, 10*time.Second)
				}
			})
		}
	})
}
