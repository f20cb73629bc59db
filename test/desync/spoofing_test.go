package desync

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSpoofing_ForwardedHeaders sends requests carrying their own
// X-Forwarded-For, -Proto and -Host, Forwarded and X-Real-IP, over each
// path into a proxy. From a peer that is not a trusted proxy, the backend
// must see none of them: the forwarding headers are the proxy's, from the
// connection and the host that routed the request. From a trusted peer
// ([ingress] trusted_proxies), X-Forwarded-For is appended to (and what
// else it says of the client may be kept); X-Forwarded-Host is still the
// routed host. An
// absolute-form target routes the request and names the forwarded host
// (or the request is refused); the Host field does not.
func TestSpoofing_ForwardedHeaders(t *testing.T) {
	spoof := func(proto string) string {
		return "X-Forwarded-For: 6.6.6.6\r\nX-Forwarded-Proto: " + proto + "\r\nX-Forwarded-Host: evil.test\r\n" +
			"Forwarded: for=6.6.6.6;host=evil.test;proto=" + proto + "\r\nX-Real-IP: 6.6.6.6\r\n"
	}
	shapes := []struct {
		name, via string
		// build returns the raw request for path on host ("" for HTTP/2).
		build func(host, path string) string
	}{
		{"GET", "http", func(host, path string) string {
			return "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n" + spoof("https") + "\r\n"
		}},
		{"HTTP/1.0 GET", "http", func(host, path string) string {
			return "GET " + path + " HTTP/1.0\r\nHost: " + host + "\r\n" + spoof("https") + "\r\n"
		}},
		{"GET with a Connection option", "http", func(host, path string) string {
			return "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: keep-alive, x-desync\r\nX-Desync: 1\r\n" + spoof("https") + "\r\n"
		}},
		{"POST 20 KiB", "http", func(host, path string) string {
			body := strings.Repeat("b", 20<<10)
			return "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\n" + spoof("https") + fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body)) + body
		}},
		{"POST chunked", "http", func(host, path string) string {
			return "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\n" + spoof("https") + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
		}},
		{"POST with Expect 100-continue", "http", func(host, path string) string {
			return "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\n" + spoof("https") + "Expect: 100-continue\r\nContent-Length: 5\r\n\r\nhello"
		}},
		{"absolute-form target, Host evil.test", "http", func(host, path string) string {
			return "GET http://" + host + path + " HTTP/1.1\r\nHost: evil.test\r\n" + spoof("https") + "\r\n"
		}},
		{"GET over TLS", "https", func(host, path string) string {
			return "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n" + spoof("http") + "\r\n"
		}},
		{"GET over HTTP/2", "h2", nil},
	}
	peers := []struct {
		name, ip string
		trusted  bool
	}{
		{"untrusted peer", untrustedPeer, false},
		{"trusted peer", trustedPeer, true},
	}
	forEachProxy(t, func(t *testing.T, p *proxy) {
		for _, peer := range peers {
			for _, shape := range shapes {
				t.Run(peer.name+"/"+shape.name, func(t *testing.T) {
					t.Parallel()
					tok := token(t)
					path := "/echo/" + tok
					host, scheme := hostApp, "http"
					if shape.via != "http" {
						host, scheme = hostTLS, "https"
					}
					status := sendSpoofed(t, p, shape.via, peer.ip, host, path, shape.build, spoof("http"))
					r, ok := p.app.request(tok, 10*time.Second)
					switch {
					case !ok && strings.HasPrefix(shape.name, "absolute-form") && status == 400:
						return // refused: safe
					case !ok:
						t.Fatalf("the backend did not receive the request (the client got %d)", status)
					}
					h := r.Header
					if r.Host != host || h.Get("X-Forwarded-Host") != host {
						t.Errorf("Host %q, X-Forwarded-Host %q; want the routed host %s", r.Host, h.Get("X-Forwarded-Host"), host)
					}
					xff := strings.Join(h.Values("X-Forwarded-For"), ", ")
					if peer.trusted {
						// What a trusted proxy says of the client (its
						// address, its scheme) may be kept.
						if want := "6.6.6.6, " + peer.ip; xff != want {
							t.Errorf("X-Forwarded-For %q from a trusted peer, want %q (appended to)", xff, want)
						}
						return
					}
					if got := h.Get("X-Forwarded-Proto"); got != scheme {
						t.Errorf("X-Forwarded-Proto %q, want %s", got, scheme)
					}
					if xff != peer.ip {
						t.Errorf("X-Forwarded-For %q, want %q", xff, peer.ip)
					}
					if v := h.Get("X-Real-IP"); v != "" && v != peer.ip {
						t.Errorf("X-Real-IP %q, want none or %s", v, peer.ip)
					}
					for name, vs := range h {
						switch name {
						case "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Real-Ip":
							continue // checked above
						}
						for _, v := range vs {
							if strings.Contains(v, "6.6.6.6") || strings.Contains(v, "evil.test") {
								t.Errorf("the backend received the client's %s: %s", name, v)
							}
						}
					}
				})
			}
		}
	})
}

// sendSpoofed sends one request built by build (or, for via "h2", an
// HTTP/2 GET carrying the header lines in spoof) from the local address
// from, and returns the status of the answer.
func sendSpoofed(t *testing.T, p *proxy, via, from, host, path string, build func(host, path string) string, spoof string) int {
	t.Helper()
	if via == "h2" {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://"+host+path, nil)
		for _, line := range strings.Split(strings.TrimSpace(spoof), "\r\n") {
			name, value, _ := strings.Cut(line, ": ")
			req.Header.Add(name, value)
		}
		resp, err := p.h2(t, from).Do(req)
		if err != nil {
			t.Fatalf("HTTP/2 request: %v", err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	sni := ""
	if via == "https" {
		sni = host
	}
	cl := p.dial(t, via, sni, from)
	defer cl.close()
	if err := cl.write(build(host, path)); err != nil {
		t.Fatalf("write: %v", err)
	}
	for {
		r, err := cl.next(10 * time.Second)
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		if r.status != http.StatusContinue {
			return r.status
		}
	}
}
