package desync

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/test/slowclient"
)

// TestSlowReader_CutOff asks for an endless response and never reads it,
// on a connection whose receive buffer is as small as the kernel allows.
// The proxy must give up once its writes make no progress for its send
// timeout (sendTimeout for the tests): close the client's connection and
// the backend's, which is not kept for another request (the backend sees
// its connection closed, not reused). Another client is served meanwhile.
func TestSlowReader_CutOff(t *testing.T) {
	shapes := []struct{ name, via, request string }{
		{"HTTP/1.1", "http", "GET /stream-length/%s HTTP/1.1\r\nHost: " + hostApp + "\r\n\r\n"},
		{"HTTP/1.0", "http", "GET /stream-length/%s HTTP/1.0\r\nHost: " + hostApp + "\r\n\r\n"},
		{"HTTP/1.1 over TLS", "https", "GET /stream-chunked/%s HTTP/1.1\r\nHost: " + hostTLS + "\r\n\r\n"},
	}
	forEachProxy(t, func(t *testing.T, p *proxy) {
		for _, shape := range shapes {
			t.Run(shape.name, func(t *testing.T) {
				t.Parallel()
				tok := token(t)
				raw := p.dialNotReading(t, shape.via)
				conn := raw
				if shape.via == "https" {
					tc := tls.Client(raw, cert.ClientConfig(hostTLS, "http/1.1"))
					if err := tc.Handshake(); err != nil {
						t.Fatal(err)
					}
					conn = tc
				}
				if _, err := io.WriteString(conn, fmt.Sprintf(shape.request, tok)); err != nil {
					t.Fatal(err)
				}
				if r, err := p.get("http", hostApp, "/echo/"+tok+"-beside"); err != nil || r.status != 200 {
					t.Errorf("another client got %v %v", r, err)
				}
				// The backend's stream ends within streamCap one way or
				// another; how is what counts.
				var s streamed
				p.app.waitFor(streamCap+5*time.Second, func() bool {
					for _, x := range p.app.streams {
						if strings.Contains(x.Target, tok) {
							s = *x
							return x.Outcome != ""
						}
					}
					return false
				})
				if s.Outcome != "closed" {
					t.Fatalf("the backend's stream for a client that reads nothing: %q after %d bytes, want its connection closed", s.Outcome, s.Sent)
				}
				t.Logf("the backend's connection was closed after %d bytes", s.Sent)
				// What the client's socket holds, and then its end.
				raw.SetReadDeadline(time.Now().Add(10 * time.Second))
				if _, err := io.Copy(io.Discard, raw); isTimeout(err) {
					t.Fatal("the proxy keeps the connection of a client that reads nothing")
				}
			})
		}
	})
}

// dialNotReading connects to p's plain-HTTP (via "http") or TLS listener
// as a client that will not read (slowclient.Dial).
func (p *proxy) dialNotReading(t *testing.T, via string) net.Conn {
	t.Helper()
	if via == "https" {
		return slowclient.Dial(t, p.https)
	}
	return slowclient.Dial(t, p.http)
}
