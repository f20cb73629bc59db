package desync

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestPoisoning_DroppedStream has an attacker ask for an endless response
// (chunked, under a 64 MiB Content-Length, or an event stream) and leave
// after 16 KiB of it, over each path into a proxy. The next users of that
// backend (a GET, then a 20 KiB form POST, each on a new connection) must
// get their own responses, and the proxy must close the backend
// connection the response was left on: pooled, the rest of the attacker's
// response would be the next user's. Each case has a backend of its own,
// so its victims can only meet the connection the attacker left.
func TestPoisoning_DroppedStream(t *testing.T) {
	forEachProxy(t, func(t *testing.T, p *proxy) {
		for _, kind := range streamKinds {
			for _, shape := range streamShapes {
				t.Run(kind+"/"+shape, func(t *testing.T) {
					t.Parallel()
					host := streamHost(kind, shape)
					b := p.streams[host]
					tok := token(t)
					dropStream(t, p, shape, host, "/stream-"+kind+"/"+tok)
					// A proxy closes the connection as soon as it sees
					// the client gone; one that does not has it pooled or
					// still open after this.
					ended := func() bool {
						for _, s := range b.streams {
							if strings.Contains(s.Target, tok) && s.Outcome != "" {
								return true
							}
						}
						return false
					}
					b.waitFor(5*time.Second, ended)
					via := "http"
					if hasCertificate(host) {
						via = "https"
					}
					victim(t, p, via, host, "GET /echo/"+tok+"/victim-get HTTP/1.1\r\nHost: "+host+"\r\n\r\n", "echo GET /echo/"+tok+"/victim-get ")
					form := "name=" + strings.Repeat("x", 20<<10-5)
					victim(t, p, via, host, "POST /echo/"+tok+"/victim-post HTTP/1.1\r\nHost: "+host+"\r\nContent-Type: application/x-www-form-urlencoded\r\n"+
						fmt.Sprintf("Content-Length: %d\r\n\r\n", len(form))+form, "echo POST /echo/"+tok+"/victim-post ")
					// A victim's request on the abandoned connection is
					// seen there a moment after its poisoned answer.
					b.waitFor(5*time.Second, ended)
					s, ok := b.streamOf(tok)
					switch {
					case !ok:
						t.Fatalf("the backend never received the attacker's request")
					case s.Outcome == "reused":
						t.Errorf("the proxy sent a request on the backend connection it had left with the response unfinished (%d bytes sent): poisoned", s.Sent)
					case s.Outcome != "closed":
						t.Errorf("the proxy kept the backend connection open (%d bytes sent, outcome %q) after its client left", s.Sent, s.Outcome)
					}
				})
			}
		}
	})
}

// dropStream asks p for target on host over shape's path, reads 16 KiB of
// the response and leaves: it closes the connection (HTTP/1) or resets
// the stream (HTTP/2).
func dropStream(t *testing.T, p *proxy, shape, host, target string) {
	t.Helper()
	buf := make([]byte, 16<<10)
	if shape == "h2" {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+host+target, nil)
		resp, err := p.h2(t, "").Do(req)
		if err != nil {
			t.Fatalf("attacker: %v", err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 || resp.ProtoMajor != 2 {
			t.Fatalf("attacker: %s %s", resp.Proto, resp.Status)
		}
		if _, err := io.ReadFull(resp.Body, buf); err != nil {
			t.Fatalf("attacker reading the stream: %v", err)
		}
		return
	}
	via, sni, extra := "http", "", ""
	switch shape {
	case "handover":
		// Connection options are one way into the gateway's other path.
		extra = "Connection: keep-alive, x-desync\r\nX-Desync: 1\r\n"
	case "tls":
		via, sni = "https", host
	}
	cl := p.dial(t, via, sni, "")
	defer cl.close()
	if err := cl.write("GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\n" + extra + "\r\n"); err != nil {
		t.Fatalf("attacker: %v", err)
	}
	cl.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(cl.br, nil)
	if err != nil {
		t.Fatalf("attacker: %v", err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("attacker: %s", resp.Status)
	}
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatalf("attacker reading the stream: %v", err)
	}
}

// victim sends raw on a new connection and checks that the answer is the
// backend's answer to it (starting with want), with nothing of the
// attacker's.
func victim(t *testing.T, p *proxy, via, host, raw, want string) {
	t.Helper()
	sni := ""
	if via == "https" {
		sni = host
	}
	cl := p.dial(t, via, sni, "")
	defer cl.close()
	if err := cl.write(raw); err != nil {
		t.Errorf("victim %q: %v", want, err)
		return
	}
	r, err := cl.next(10 * time.Second)
	switch {
	case err != nil:
		t.Errorf("victim %q: no answer: %v", want, err)
	case r.status != 200 || !strings.HasPrefix(string(r.body), want) || r.header.Get("Set-Cookie") != "" || strings.Contains(string(r.body), "POISON"):
		t.Errorf("victim %q got %v (Set-Cookie %q): not its own answer", want, r, r.header.Get("Set-Cookie"))
	}
}
