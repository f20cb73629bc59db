package desync

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSmuggling_UnreadBody sends a request with a body to each answer a
// proxy gives without a backend (a 404, a redirect route, a 502, the 308
// to HTTPS), with a request hidden in the body, in one write or sent
// after the answer, then an honest request on the same connection. A
// proxy must read the body (and answer the honest request) or close the
// connection; the hidden request must never reach a backend.
func TestSmuggling_UnreadBody(t *testing.T) {
	targets := []struct {
		name, via, host string
		status          int
	}{
		{"404 host", "http", hostUnknown, 404},
		{"redirect route", "http", hostRedirect, 308},
		{"502 route", "http", hostDead, 502},
		{"308 to HTTPS", "http", hostTLS, 308},
		{"404 host over TLS", "https", hostUnknown, 404},
	}
	pad := func(n int) string { return strings.Repeat("a", n) }
	// Each body builds the attack from its head (without the framing
	// field) and the hidden request: first is sent at once, rest (if
	// any) after the proxy answered.
	bodies := []struct {
		name  string
		build func(head, hidden string) (first, rest string)
	}{
		{"Content-Length 8192 bytes then a request (#18's example)", func(head, hidden string) (string, string) {
			return head + fmt.Sprintf("Content-Length: %d\r\n\r\n", 8192+len(hidden)) + pad(8192) + hidden, ""
		}},
		{"Content-Length 8192 bytes, the request sent after the answer", func(head, hidden string) (string, string) {
			return head + fmt.Sprintf("Content-Length: %d\r\n\r\n", 8192+len(hidden)) + pad(8192), hidden
		}},
		{"Content-Length, the body is a request", func(head, hidden string) (string, string) {
			return head + fmt.Sprintf("Content-Length: %d\r\n\r\n", len(hidden)) + hidden, ""
		}},
		{"Content-Length 64 KiB, the request sent after the answer", func(head, hidden string) (string, string) {
			return head + fmt.Sprintf("Content-Length: %d\r\n\r\n", 64<<10+len(hidden)) + pad(64<<10), hidden
		}},
		{"chunked, a request inside the chunk", func(head, hidden string) (string, string) {
			return head + "Transfer-Encoding: chunked\r\n\r\n" + fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(hidden), hidden), ""
		}},
		{"chunked 8 KiB, the request sent after the answer", func(head, hidden string) (string, string) {
			return head + "Transfer-Encoding: chunked\r\n\r\n" + fmt.Sprintf("%x\r\n", 8192+len(hidden)) + pad(8192), hidden + "\r\n0\r\n\r\n"
		}},
	}
	recheckAtEnd(t)
	forEachProxy(t, func(t *testing.T, p *proxy) {
		for _, target := range targets {
			for _, body := range bodies {
				t.Run(target.name+"/"+body.name, func(t *testing.T) {
					t.Parallel()
					tok := token(t)
					appHost := hostApp
					if target.via == "https" {
						appHost = hostTLS
					}
					hidden := "GET /echo/" + tok + "/smuggled HTTP/1.1\r\nHost: " + appHost + "\r\n\r\n"
					head := "POST /echo/" + tok + "/attack HTTP/1.1\r\nHost: " + target.host + "\r\nContent-Type: application/x-www-form-urlencoded\r\n"
					first, rest := body.build(head, hidden)
					allowed := []int{target.status}
					if rest != "" {
						// A proxy that reads the body before answering
						// times the stalled client out.
						allowed = append(allowed, 408)
					}
					got, end := attack(t, p, target.via, appHost, first, rest, appHost, tok)
					switch {
					case len(got) == 0 && rest != "" && end == endClosed:
						// It waited for the whole body, the client for an
						// answer, and it closed the connection after its
						// body timeout: safe.
					case len(got) == 0 || !slices.Contains(allowed, got[0].status):
						t.Errorf("answer %v, want status %v", got, allowed)
					}
					judge(t, p.app, tok, got, end)
				})
			}
		}
	})
}

// attack sends first to p, then, when rest is not empty, waits for an
// answer and sends rest; then an honest request for host on the same
// connection (its target holds tok+"/after"). It reads until the proxy
// closes the connection or answers the honest request.
func attack(t *testing.T, p *proxy, via, sni, first, rest, host, tok string) ([]response, ending) {
	t.Helper()
	cl := p.dial(t, via, sni, "")
	honest := "GET /echo/" + tok + "/after HTTP/1.1\r\nHost: " + host + "\r\n\r\n"
	isHonest := func(r response) bool { return strings.Contains(string(r.body), tok+"/after") }
	var got []response
	if rest == "" {
		cl.write(first + honest)
	} else {
		cl.write(first)
		if r, err := cl.next(5 * time.Second); err == nil {
			got = append(got, r)
		}
		cl.write(rest + honest)
	}
	more, end := cl.until(10*time.Second, isHonest)
	return append(got, more...), end
}

// judge checks what an attack carrying tok got: the connection closed or
// the honest request answered, no answer to a hidden request, and
// nothing of it at the backend but the honest request.
func judge(t *testing.T, b *backend, tok string, got []response, end ending) {
	t.Helper()
	if end == endSilence {
		t.Errorf("%s for 10 s after %v: it neither answered the next request nor closed the connection", end, got)
	}
	for _, r := range got {
		if strings.Contains(string(r.body), "smuggled") {
			t.Errorf("a hidden request was answered: %v", got)
		}
	}
	if len(got) > 2 {
		t.Errorf("%d answers to one request and the honest one: %v", len(got), got)
	}
	checkBackend(t, b, tok)
}

// checkBackend fails if b received anything for tok other than the honest
// request; recheckAtEnd looks again when the whole test ends.
func checkBackend(t *testing.T, b *backend, tok string) {
	t.Helper()
	for _, msg := range unexpected(b, tok) {
		t.Errorf("%s", msg)
	}
	late.Lock()
	defer late.Unlock()
	late.checks = append(late.checks, lateCheck{t.Name(), b, tok})
}

func unexpected(b *backend, tok string) []string {
	var out []string
	for _, r := range b.requests(tok) {
		if !strings.HasSuffix(r.Target, tok+"/after") {
			out = append(out, fmt.Sprintf("the backend received %s %s (conn %d, body %d bytes): a request the proxy should not have sent", r.Method, r.Target, r.Conn, len(r.Body)))
		}
	}
	return out
}

// late holds the backend checks to repeat when their test ends: a hidden
// request read late still shows then.
var late struct {
	sync.Mutex
	checks []lateCheck
}

type lateCheck struct {
	name string
	b    *backend
	tok  string
}

// recheckAtEnd repeats the backend checks of t's cases once all of them
// have ended.
func recheckAtEnd(t *testing.T) {
	t.Cleanup(func() {
		late.Lock()
		defer late.Unlock()
		seen := map[string]bool{}
		for _, l := range late.checks {
			if !strings.HasPrefix(l.name, t.Name()+"/") || seen[l.name] {
				continue
			}
			for _, msg := range unexpected(l.b, l.tok) {
				seen[l.name] = true
				t.Errorf("%s, by the end of the test: %s", l.name, msg)
			}
		}
	})
}
