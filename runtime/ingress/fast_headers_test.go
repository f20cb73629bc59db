package ingress

import (
	"bufio"
	"net"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestStripHopHeaders covers both ways through stripHopHeaders: the quick
// look that finds no hop-by-hop header and leaves the message alone, and
// the removal, whichever way the client or the backend spelled the names.
func TestStripHopHeaders(t *testing.T) {
	requests := []struct {
		name, head string
		gone, kept []string
	}{
		{"none", "Accept: */*\r\nX-Custom: 1\r\nCookie: a=1; b=2\r\n", nil, []string{"Accept", "X-Custom", "Cookie", "User-Agent"}},
		{"lower-case names", "keep-alive: timeout=5\r\nproxy-connection: keep-alive\r\nte: trailers\r\nupgrade: h2c\r\nX-Custom: 1\r\n",
			[]string{"Keep-Alive", "Proxy-Connection", "Te", "Upgrade"}, []string{"X-Custom"}},
		{"Connection names a header", "Connection: keep-alive, X-Secret\r\nX-Secret: 1\r\nX-Custom: 1\r\n",
			[]string{"Connection", "X-Secret"}, []string{"X-Custom"}},
		{"Connection: close", "Connection: close\r\nX-Custom: 1\r\n", []string{"Connection"}, []string{"X-Custom"}},
		{"Trailer", "Trailer: X-Checksum\r\nTransfer-Encoding: chunked\r\n", []string{"Trailer"}, []string{"Transfer-Encoding"}},
		{"proxy credentials", "Proxy-Authorization: Basic eDp5\r\nAuthorization: Bearer t\r\n", []string{"Proxy-Authorization"}, []string{"Authorization"}},
	}
	for _, tt := range requests {
		t.Run("request: "+tt.name, func(t *testing.T) {
			var h fasthttp.RequestHeader
			if err := h.Read(bufio.NewReader(strings.NewReader("GET / HTTP/1.1\r\nHost: a.example.com\r\nUser-Agent: test\r\n" + tt.head + "\r\n"))); err != nil {
				t.Fatal(err)
			}
			stripHopHeaders(&h)
			for _, name := range tt.gone {
				if v := h.Peek(name); len(v) > 0 {
					t.Errorf("%s: %q left", name, v)
				}
			}
			if h.ConnectionClose() {
				t.Error("Connection: close left for the backend")
			}
			for _, name := range tt.kept {
				if len(h.Peek(name)) == 0 {
					t.Errorf("%s removed", name)
				}
			}
		})
	}

	var resp fasthttp.ResponseHeader
	head := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive, X-Internal\r\nX-Internal: 1\r\nkeep-alive: timeout=5\r\nCache-Control: no-store\r\n\r\n"
	if err := resp.Read(bufio.NewReader(strings.NewReader(head))); err != nil {
		t.Fatal(err)
	}
	stripHopHeaders(&resp)
	for _, name := range []string{"Connection", "X-Internal", "Keep-Alive"} {
		if v := resp.Peek(name); len(v) > 0 {
			t.Errorf("response %s: %q left", name, v)
		}
	}
	if resp.ContentLength() != 2 || string(resp.Peek("Cache-Control")) != "no-store" {
		t.Errorf("response lost its other headers: %q", resp.Header())
	}
}

// TestSetForwarded checks the gateway's forwarding headers replace the
// client's, however spelled, that Expect goes, and how client addresses
// are written.
func TestSetForwarded(t *testing.T) {
	tests := []struct {
		name, head string
		client     net.IP
		wantFor    string
	}{
		{"no client headers", "Accept: */*\r\n", net.IPv4(10, 0, 0, 7), "10.0.0.7"},
		{"spoofed, any spelling", "x-forwarded-for: 6.6.6.6\r\nX-Forwarded-For: 7.7.7.7\r\nX-FORWARDED-HOST: evil.example\r\nx-forwarded-proto: https\r\nforwarded: for=1.2.3.4\r\nExpect: 100-continue\r\n",
			net.IPv4(192, 0, 2, 1), "192.0.2.1"},
		{"Expect alone", "Expect: 100-continue\r\n", net.IPv4(10, 0, 0, 7), "10.0.0.7"},
		{"X-Forwarded-Proto alone", "X-Forwarded-Proto: https\r\n", net.IPv4(10, 0, 0, 7), "10.0.0.7"},
		{"IPv6 client", "Accept: */*\r\n", net.ParseIP("2001:db8::1"), "2001:db8::1"},
		{"4-byte IPv4 client", "Accept: */*\r\n", net.IP{127, 0, 0, 1}, "127.0.0.1"},
		{"no client address", "X-Forwarded-For: 6.6.6.6\r\n", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var req fasthttp.Request
			if err := req.Header.Read(bufio.NewReader(strings.NewReader("GET / HTTP/1.1\r\nHost: app.example.com\r\n" + tt.head + "\r\n"))); err != nil {
				t.Fatal(err)
			}
			setForwarded(&req, tt.client)
			got := map[string][]string{}
			req.Header.VisitAll(func(k, v []byte) { got[string(k)] = append(got[string(k)], string(v)) })
			want := map[string][]string{"X-Forwarded-Host": {"app.example.com"}, "X-Forwarded-Proto": {"http"}}
			if tt.wantFor != "" {
				want["X-Forwarded-For"] = []string{tt.wantFor}
			}
			for _, name := range []string{"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "Forwarded", "Expect"} {
				if strings.Join(got[name], "|") != strings.Join(want[name], "|") {
					t.Errorf("%s: %q, want %q", name, got[name], want[name])
				}
			}
		})
	}
}
