package desync

import (
	"fmt"
	"slices"
	"testing"
)

// TestMalformed_Heads sends each head two HTTP implementations could read
// differently, with a request hidden where one reading would find it,
// then an honest request on the same connection. The proxy must refuse
// the head (400; 501 for a transfer coding it does not implement; 505 for
// a protocol version it does not speak), close the connection, and send
// nothing of it to the backend. Over the plain-HTTP listener and over TLS.
func TestMalformed_Heads(t *testing.T) {
	// Each case builds the attack from the target path, the host and the
	// hidden request; chunk(hidden) is the hidden request as one chunk
	// and the last chunk.
	chunk := func(s string) string { return fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(s), s) }
	cases := []struct {
		name  string
		build func(path, host, hidden string) string
		want  []int
		// nginxAnswers, when set, are nginx's statuses for a head it
		// accepts without routing it anywhere: it keeps the connection,
		// and only the head itself must stay away from the backend.
		nginxAnswers []int
	}{
		{"Content-Length and Transfer-Encoding", func(path, host, hidden string) string {
			return "POST " + path + " HTTP/1.1\r\nHost: " + host + fmt.Sprintf("\r\nContent-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n", len("0\r\n\r\n"+hidden)) + "0\r\n\r\n" + hidden
		}, []int{400}, nil},
		{"Content-Length and a folded Transfer-Encoding", func(path, host, hidden string) string {
			return "POST " + path + " HTTP/1.1\r\nHost: " + host + fmt.Sprintf("\r\nContent-Length: %d\r\nTransfer-Encoding:\r\n chunked\r\n\r\n", len("0\r\n\r\n"+hidden)) + "0\r\n\r\n" + hidden
		}, []int{400}, nil},
		{"a folded Content-Length", func(path, host, hidden string) string {
			return "POST " + path + " HTTP/1.1\r\nHost: " + host + fmt.Sprintf("\r\nContent-Length:\r\n %d\r\n\r\n", len(hidden)) + hidden
		}, []int{400}, nil},
		{"two different Content-Lengths", func(path, host, hidden string) string {
			return "POST " + path + " HTTP/1.1\r\nHost: " + host + fmt.Sprintf("\r\nContent-Length: 0\r\nContent-Length: %d\r\n\r\n", len(hidden)) + hidden
		}, []int{400}, nil},
		{"two different Content-Lengths in one field", func(path, host, hidden string) string {
			return "POST " + path + " HTTP/1.1\r\nHost: " + host + fmt.Sprintf("\r\nContent-Length: 0, %d\r\n\r\n", len(hidden)) + hidden
		}, []int{400}, nil},
		{"bare CR in a header value", func(path, host, hidden string) string {
			return "POST " + path + " HTTP/1.1\r\nHost: " + host + fmt.Sprintf("\r\nX-Pad: a\rContent-Length: %d\r\n\r\n", len(hidden)) + hidden
		}, []int{400}, nil},
		{"bare CR in the request line", func(path, host, hidden string) string {
			return "GET " + path + "\rX HTTP/1.1\r\nHost: " + host + "\r\n\r\n" + hidden
		}, []int{400}, nil},
		{"NUL in a header value", func(path, host, hidden string) string {
			return "POST " + path + " HTTP/1.1\r\nHost: " + host + fmt.Sprintf("\r\nX-Pad: a\x00b\r\nContent-Length: %d\r\n\r\n", len(hidden)) + hidden
		}, []int{400}, nil},
		{"NUL in the request line", func(path, host, hidden string) string {
			return "GET " + path + "\x00 HTTP/1.1\r\nHost: " + host + "\r\n\r\n" + hidden
		}, []int{400}, nil},
		{"Transfer-Encoding xchunked", func(path, host, hidden string) string {
			return "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\nTransfer-Encoding: xchunked\r\n\r\n" + chunk(hidden)
		}, []int{501}, nil},
		{"Transfer-Encoding chunked, identity", func(path, host, hidden string) string {
			return "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\nTransfer-Encoding: chunked, identity\r\n\r\n" + chunk(hidden)
		}, []int{400, 501}, nil},
		{"Transfer-Encoding gzip, chunked", func(path, host, hidden string) string {
			return "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\nTransfer-Encoding: gzip, chunked\r\n\r\n" + chunk(hidden)
		}, []int{501}, nil},
		{"Transfer-Encoding identity", func(path, host, hidden string) string {
			return "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\nTransfer-Encoding: identity\r\n\r\n" + chunk(hidden)
		}, []int{501}, nil},
		{"Transfer-Encoding in HTTP/1.0", func(path, host, hidden string) string {
			return "POST " + path + " HTTP/1.0\r\nHost: " + host + "\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk(hidden)
		}, []int{400}, nil},
		{"HTTP/2.0 on an HTTP/1 connection", func(path, host, hidden string) string {
			return "GET " + path + " HTTP/2.0\r\nHost: " + host + "\r\n\r\n" + hidden
		}, []int{505}, nil},
		{"protocol FOO/9", func(path, host, hidden string) string {
			return "GET " + path + " FOO/9\r\nHost: " + host + "\r\n\r\n" + hidden
		}, []int{400, 505}, nil},
		{"two Host fields", func(path, host, hidden string) string {
			return "GET " + path + " HTTP/1.1\r\nHost: evil.test\r\nHost: " + host + "\r\n\r\n" + hidden
		}, []int{400}, nil},
		{"Host with userinfo", func(path, host, hidden string) string {
			return "GET " + path + " HTTP/1.1\r\nHost: evil.test@" + host + "\r\n\r\n" + hidden
		}, []int{400}, []int{404}},
	}
	listeners := []struct{ name, via, host string }{
		{"plain", "http", hostApp},
		{"TLS", "https", hostTLS},
	}
	recheckAtEnd(t)
	forEachProxy(t, func(t *testing.T, p *proxy) {
		for _, l := range listeners {
			for _, tc := range cases {
				t.Run(l.name+"/"+tc.name, func(t *testing.T) {
					t.Parallel()
					tok := token(t)
					hidden := "GET /echo/" + tok + "/smuggled HTTP/1.1\r\nHost: " + l.host + "\r\n\r\n"
					got, end := attack(t, p, l.via, l.host, tc.build("/echo/"+tok, l.host, hidden), "", l.host, tok)
					if p.name == "nginx" && tc.nginxAnswers != nil {
						// nginx takes the whole field for a host it does
						// not serve; what follows is pipelined.
						if len(got) == 0 || !slices.Contains(tc.nginxAnswers, got[0].status) {
							t.Errorf("answer %v, want nginx's %v", got, tc.nginxAnswers)
						}
						for _, r := range p.app.requests(tok) {
							if r.Target == "/echo/"+tok {
								t.Errorf("the backend received the head: %s %s Host %s", r.Method, r.Target, r.Host)
							}
						}
						return
					}
					if len(got) == 0 || !slices.Contains(tc.want, got[0].status) {
						t.Errorf("answer %v, want status %v", got, tc.want)
					}
					if end != endClosed || len(got) > 1 {
						t.Errorf("after %v %s; want the connection closed after the refusal", got, end)
					}
					for _, r := range p.app.requests(tok) {
						t.Errorf("the backend received %s %s (body %d bytes)", r.Method, r.Target, len(r.Body))
					}
				})
			}
		}
	})
}
