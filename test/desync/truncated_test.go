package desync

import (
	"io"
	"net/http"
	"testing"
	"time"
)

// TestTruncated_Responses has the backend die in the middle of a response:
// inside a chunk, after a whole chunk, and before the end of its
// Content-Length. The client must be able to tell: the proxy closes the
// connection (HTTP/1) or resets the stream (HTTP/2) where the response
// broke off, never ends it cleanly (a last chunk "0\r\n\r\n"); or, had
// nothing been sent yet, it answers 502.
func TestTruncated_Responses(t *testing.T) {
	kinds := []string{"die-mid-chunk", "die-between-chunks", "die-mid-length"}
	shapes := []struct {
		name, via, extra, proto string
		// lengthOnly: an HTTP/1.0 client cannot tell a chunked response
		// cut short from one delimited by the close.
		lengthOnly bool
	}{
		{name: "GET", via: "http", proto: "HTTP/1.1"},
		{name: "GET with a Connection option", via: "http", proto: "HTTP/1.1", extra: "Connection: keep-alive, x-desync\r\nX-Desync: 1\r\n"},
		{name: "HTTP/1.0 GET", via: "http", proto: "HTTP/1.0", lengthOnly: true},
		{name: "GET over TLS", via: "https", proto: "HTTP/1.1"},
		{name: "GET over HTTP/2", via: "h2"},
	}
	forEachProxy(t, func(t *testing.T, p *proxy) {
		for _, kind := range kinds {
			for _, shape := range shapes {
				if shape.lengthOnly && kind != "die-mid-length" {
					continue
				}
				t.Run(kind+"/"+shape.name, func(t *testing.T) {
					t.Parallel()
					path := "/" + kind + "/" + token(t)
					if shape.via == "h2" {
						resp, err := p.h2(t, "").Get("https://" + hostTLS + path)
						if err != nil {
							return // no response at all: the client knows
						}
						defer resp.Body.Close()
						body, err := io.ReadAll(resp.Body)
						if err == nil && resp.StatusCode != http.StatusBadGateway {
							t.Errorf("%s %d with %d bytes, ended cleanly: the truncated response looks complete", resp.Proto, resp.StatusCode, len(body))
						}
						return
					}
					host := hostApp
					if shape.via == "https" {
						host = hostTLS
					}
					cl := p.dial(t, shape.via, host, "")
					cl.write("GET " + path + " " + shape.proto + "\r\nHost: " + host + "\r\n" + shape.extra + "\r\n")
					got, end := cl.until(10*time.Second, func(response) bool { return true })
					switch {
					case len(got) == 0:
						// Closed before any answer: the client knows.
					case got[0].status == http.StatusBadGateway && got[0].bodyErr == nil:
						// Answered before anything was sent: fine.
					case got[0].bodyErr == nil:
						closed, _ := cl.closedWithin(2 * time.Second)
						t.Errorf("%d with %d bytes, ended cleanly (then closed: %v): the truncated response looks complete", got[0].status, len(got[0].body), closed)
					case end != endClosed:
						t.Errorf("the response broke off, then %s", end)
					}
				})
			}
		}
	})
}
