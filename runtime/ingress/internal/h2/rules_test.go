package h2

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/net/http2"
)

// Every request RFC 9113 8.2-8.3 calls malformed, and every one the
// gateway could not pass on as HTTP/1.1 unchanged (the h2 to h1
// downgrade smuggling class), is reset with PROTOCOL_ERROR and never
// reaches the handler.
func TestServer_MalformedRequests(t *testing.T) {
	var served atomic.Int32
	s := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		io.Copy(io.Discard, r.Body)
	}))
	base := []string{":method", "GET", ":scheme", "https", ":path", "/", ":authority", "h2.test"}
	with := func(extra ...string) []string { return append(append([]string(nil), base...), extra...) }
	without := func(name string) []string {
		var f []string
		for i := 0; i < len(base); i += 2 {
			if base[i] != name {
				f = append(f, base[i], base[i+1])
			}
		}
		return f
	}
	cases := []struct {
		name   string
		fields []string
	}{
		{"no :method", without(":method")},
		{"no :scheme", without(":scheme")},
		{"no :path", without(":path")},
		{"empty :path", append(without(":path"), ":path", "")},
		{"two :method", with(":method", "POST")},
		{"two :path", with(":path", "/x")},
		{"unknown pseudo-header", with(":foo", "bar")},
		{":protocol (not offered)", with(":protocol", "websocket")},
		{"pseudo-header after a regular field", append([]string{":method", "GET", "x-a", "b"}, base[2:]...)},
		{"upper-case name", with("X-Upper", "v")},
		{"name with a space", with("x a", "v")},
		{"name with a colon", with("x:a", "v")},
		{"connection", with("connection", "close")},
		{"keep-alive", with("keep-alive", "5")},
		{"proxy-connection", with("proxy-connection", "keep-alive")},
		{"transfer-encoding", with("transfer-encoding", "chunked")},
		{"upgrade", with("upgrade", "websocket")},
		{"te other than trailers", with("te", "gzip")},
		{"value with CR", with("x-a", "a\rb")},
		{"value with LF", with("x-a", "a\nGET /smuggled HTTP/1.1")},
		{"value with NUL", with("x-a", "a\x00b")},
		{"value with leading space", with("x-a", " a")},
		{"value with trailing tab", with("x-a", "a\t")},
		{"method not a token", append([]string{":method", "GE T"}, base[2:]...)},
		{"path with a space", append(without(":path"), ":path", "/a b HTTP/1.1\r\nx")},
		{"path not origin form", append(without(":path"), ":path", "http://evil.test/")},
		{"asterisk for GET", append(without(":path"), ":path", "*")},
		{"authority with userinfo", append(without(":authority"), ":authority", "evil.test@h2.test")},
		{"authority with a slash", append(without(":authority"), ":authority", "h2.test/x")},
		{"host differs from authority", with("host", "evil.test")},
		{"two content-lengths", with("content-length", "1", "content-length", "2")},
		{"content-length not a number", with("content-length", "+1")},
		{"content-length without a body", with("content-length", "5")},
	}
	rc := s.dial(t)
	id := uint32(1)
	for _, tc := range cases {
		rc.writeHeaders(id, true, rc.headers(tc.fields...))
		if code := rc.reset(id); code != http2.ErrCodeProtocol {
			t.Errorf("%s: reset %v, want PROTOCOL_ERROR", tc.name, code)
		}
		id += 2
	}
	if n := served.Load(); n != 0 {
		t.Fatalf("%d malformed requests reached the handler", n)
	}
	// The connection still serves.
	rc.request(id, "GET", true, "te", "trailers", "cookie", "a=1", "cookie", "b=2")
	if status, _, err := rc.response(id); status != "200" || err != nil {
		t.Fatalf("after the malformed ones: %s %v", status, err)
	}

	// Content-Length against the DATA sent: more, or less and ended.
	for _, tc := range []struct {
		name string
		data []string
	}{{"more DATA than Content-Length", []string{"abc", "def"}}, {"less DATA than Content-Length", []string{"ab"}}} {
		id += 2
		rc.request(id, "POST", false, "content-length", "5")
		for i, d := range tc.data {
			rc.fr.WriteData(id, i == len(tc.data)-1, []byte(d))
		}
		if code := rc.reset(id); code != http2.ErrCodeProtocol {
			t.Errorf("%s: reset %v, want PROTOCOL_ERROR", tc.name, code)
		}
	}
}

// A request's fields reach the handler as net/http's: cookies joined, the
// authority as Host, Host alone when there is no :authority.
func TestServer_RequestFields(t *testing.T) {
	s := startServer(t, echo)
	rc := s.dial(t)
	rc.request(1, "GET", true, "cookie", "a=1", "cookie", "b=2")
	rc.expect(func(f http2.Frame) bool {
		h, ok := f.(*http2.MetaHeadersFrame)
		if ok {
			if got := headerValue(h, "x-cookie"); got != "a=1; b=2" {
				t.Fatalf("cookie %q", got)
			}
		}
		return ok
	})
	rc.writeHeaders(3, true, rc.headers(":method", "GET", ":scheme", "https", ":path", "/", "host", "other.test"))
	h := rc.expect(func(f http2.Frame) bool { _, ok := f.(*http2.MetaHeadersFrame); return ok }).(*http2.MetaHeadersFrame)
	if got := headerValue(h, "x-host"); got != "other.test" {
		t.Fatalf("host %q", got)
	}
}

func headerValue(h *http2.MetaHeadersFrame, name string) string {
	for _, f := range h.Fields {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

// A header list over the limit is answered 431; header blocks that keep
// coming in CONTINUATION frames past it end the connection
// (CVE-2023-45288), before they are decoded whole.
func TestServer_HeaderListLimits(t *testing.T) {
	s := startServer(t, echo)
	rc := s.dial(t)
	var many []string
	for i := range 20 {
		many = append(many, "x-big-"+string(rune('a'+i)), strings.Repeat("a", 1000))
	}
	rc.request(1, "GET", true, many...)
	if status, _, err := rc.response(1); status != "431" || err != nil {
		t.Fatalf("too long: %s %v, want 431", status, err)
	}

	rc = s.dial(t)
	block := rc.headers(":method", "GET", ":scheme", "https", ":path", "/", ":authority", "h2.test")
	rc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block, EndStream: true})
	frag := rc.headers("x-a", strings.Repeat("b", 4000))
	if code := rc.floodUntilGoAway(100, func() error { return rc.fr.WriteContinuation(1, false, frag) }); code != http2.ErrCodeProtocol {
		t.Fatalf("CONTINUATION flood: GOAWAY %v, want PROTOCOL_ERROR", code)
	}
}

// Connection errors end the connection with a GOAWAY that says which.
func TestServer_ConnectionErrors(t *testing.T) {
	s := startServer(t, echo)
	for _, tc := range []struct {
		name  string
		write func(rc *rawConn) error
		want  http2.ErrCode
	}{
		{"a frame over the size offered", func(rc *rawConn) error {
			rc.request(1, "POST", false)
			return rc.fr.WriteData(1, false, make([]byte, 65<<10))
		}, http2.ErrCodeFrameSize},
		{"RST_STREAM on a stream never opened", func(rc *rawConn) error { return rc.fr.WriteRSTStream(99, http2.ErrCodeCancel) }, http2.ErrCodeProtocol},
		{"HEADERS on an even stream", func(rc *rawConn) error {
			rc.writeHeaders(2, true, rc.headers(":method", "GET", ":scheme", "https", ":path", "/", ":authority", "h2.test"))
			return nil
		}, http2.ErrCodeProtocol},
		{"a stream id going back", func(rc *rawConn) error {
			rc.request(5, "GET", true)
			rc.request(3, "GET", true)
			return nil
		}, http2.ErrCodeProtocol},
		{"the connection window beyond 2^31-1", func(rc *rawConn) error { return rc.fr.WriteWindowUpdate(0, 1<<31-1) }, http2.ErrCodeFlowControl},
		{"PUSH_PROMISE from a client", func(rc *rawConn) error {
			return rc.fr.WritePushPromise(http2.PushPromiseParam{StreamID: 1, PromiseID: 2, BlockFragment: rc.headers(":method", "GET"), EndHeaders: true})
		}, http2.ErrCodeProtocol},
		{"a lone CONTINUATION", func(rc *rawConn) error { return rc.fr.WriteContinuation(1, true, nil) }, http2.ErrCodeProtocol},
	} {
		rc := s.dial(t)
		if code := rc.floodUntilGoAway(1, func() error { return tc.write(rc) }); code != tc.want {
			t.Errorf("%s: GOAWAY %v, want %v", tc.name, code, tc.want)
		}
	}
}
