package ingress

import (
	"bytes"
	"crypto/tls"
	"io"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// The gateway's HTTP/2 server (internal/h2, whose own tests cover the
// protocol's limits) in front of the forwarding core: the same answers,
// forwarding fields and body limits as HTTP/1, and nothing malformed
// reaches a backend.

// h2Client is a raw HTTP/2 connection to the gateway's TLS listener.
type h2Client struct {
	t   *testing.T
	c   *tls.Conn
	fr  *http2.Framer
	enc *hpack.Encoder
	buf bytes.Buffer
	id  uint32
}

func dialH2(t *testing.T, addr string) *h2Client {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{ServerName: "app.example.com", InsecureSkipVerify: true, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if p := c.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("negotiated %q", p)
	}
	h := &h2Client{t: t, c: c, fr: http2.NewFramer(c, c), id: 1}
	h.enc = hpack.NewEncoder(&h.buf)
	h.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	io.WriteString(c, http2.ClientPreface)
	h.fr.WriteSettings()
	return h
}

// send opens a stream with fields after :method, :scheme and :path, and
// a body in DATA frames (ending the stream unless open); it returns the
// stream's id.
func (h *h2Client) send(method, path string, body []string, open bool, fields ...string) uint32 {
	h.t.Helper()
	h.buf.Reset()
	all := append([]string{":method", method, ":scheme", "https", ":path", path}, fields...)
	for i := 0; i < len(all); i += 2 {
		h.enc.WriteField(hpack.HeaderField{Name: all[i], Value: all[i+1]})
	}
	id := h.id
	h.id += 2
	h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: h.buf.Bytes(), EndHeaders: true, EndStream: len(body) == 0 && !open})
	for i, part := range body {
		h.fr.WriteData(id, i == len(body)-1 && !open, []byte(part))
	}
	return id
}

// answer reads stream id's answer: its status and fields, its body, and
// the code of a RST_STREAM or GOAWAY that ended it instead.
func (h *h2Client) answer(id uint32) (fields map[string]string, body string, reset http2.ErrCode, wasReset bool) {
	h.t.Helper()
	fields = map[string]string{}
	for {
		h.c.SetReadDeadline(time.Now().Add(15 * time.Second))
		f, err := h.fr.ReadFrame()
		if err != nil {
			h.t.Fatalf("stream %d: %v", id, err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				h.fr.WriteSettingsAck()
			}
		case *http2.MetaHeadersFrame:
			if f.StreamID == id {
				for _, hf := range f.Fields {
					fields[hf.Name] = hf.Value
				}
				if f.StreamEnded() {
					return fields, body, 0, false
				}
			}
		case *http2.DataFrame:
			if f.StreamID == id {
				body += string(f.Data())
				if f.StreamEnded() {
					return fields, body, 0, false
				}
			}
		case *http2.RSTStreamFrame:
			if f.StreamID == id {
				return fields, body, f.ErrCode, true
			}
		case *http2.GoAwayFrame:
			return fields, body, f.ErrCode, true
		}
	}
}

func TestGateway_HTTP2Answers(t *testing.T) {
	t.Parallel()
	const idle = 300 * time.Millisecond
	b, rec := desyncGateway(t, Limits{MaxBodyBytes: 64 << 10, BodyIdleTimeout: idle})
	h := dialH2(t, b.addrs.HTTPS)

	// Forwarding fields from the host that routed the request; a
	// client's own are replaced.
	id := h.send("GET", "/fields", nil, false, ":authority", "app.example.com", "x-forwarded-for", "6.6.6.6", "x-forwarded-host", "evil.test", "x-real-ip", "6.6.6.6")
	if f, body, _, reset := h.answer(id); reset || f[":status"] != "200" || body != "GET /fields 0" {
		t.Fatalf("/fields: %v %q", f, body)
	}
	if r := rec.waitRequest(t, "/fields"); r.xff != "127.0.0.1" || r.xhost != "app.example.com" || r.realIP != "127.0.0.1" || r.proto != "https" {
		t.Fatalf("the backend got %+v", r)
	}
	// The gateway's own answers: 404, a redirect, 502.
	id = h.send("GET", "/x", nil, false, ":authority", "unknown.example.com")
	if f, body, _, _ := h.answer(id); f[":status"] != "404" || !strings.Contains(body, "no application is routed") {
		t.Fatalf("unknown host: %v %q", f, body)
	}
	id = h.send("GET", "/path?q=1", nil, false, ":authority", "redir.example.com")
	if f, _, _, _ := h.answer(id); f[":status"] != "308" && f[":status"] != "301" && f[":status"] != "302" || f["location"] != "https://elsewhere.example.com/path?q=1" {
		t.Fatalf("redirect: %v", f)
	}
	id = h.send("GET", "/", nil, false, ":authority", "dead.example.com")
	if f, _, _, _ := h.answer(id); f[":status"] != "502" {
		t.Fatalf("dead backend: %v", f)
	}

	// Bodies: a streamed one over the limit is 413, one that stops coming
	// is 408 after the body idle timeout, and the backend sees it break
	// off; the connection goes on.
	chunk := strings.Repeat("b", 16<<10)
	id = h.send("POST", "/over", []string{chunk, chunk, chunk, chunk, chunk}, false, ":authority", "app.example.com")
	if f, _, _, _ := h.answer(id); f[":status"] != "413" {
		t.Fatalf("over the limit: %v", f)
	}
	id = h.send("POST", "/over-length", nil, true, ":authority", "app.example.com", "content-length", "100000")
	if f, _, _, _ := h.answer(id); f[":status"] != "413" {
		t.Fatalf("Content-Length over the limit: %v", f)
	}
	if rec.sawPath("/over-length") {
		t.Fatal("a request over the limit reached the backend")
	}
	id = h.send("POST", "/stalled", []string{chunk}, true, ":authority", "app.example.com", "content-length", "40000")
	if f, _, _, _ := h.answer(id); f[":status"] != "408" {
		t.Fatalf("stalled body: %v", f)
	}
	if r := rec.waitRequest(t, "/stalled"); r.bodyErr == nil {
		t.Fatalf("the backend's request ended cleanly with %d bytes", r.body)
	}
	// A backend that breaks off mid-body resets the stream.
	id = h.send("GET", "/truncated", nil, false, ":authority", "app.example.com")
	if _, body, code, reset := h.answer(id); !reset || code == http2.ErrCodeNo {
		t.Fatalf("truncated: ended with %q (reset %v %v), want the stream reset", body, reset, code)
	}
	// A field value that would split the backend's request is refused
	// by the server, before any backend.
	id = h.send("GET", "/smuggle", nil, false, ":authority", "app.example.com", "x-a", "a\r\nGET /smuggled HTTP/1.1")
	if _, _, code, reset := h.answer(id); !reset || code != http2.ErrCodeProtocol {
		t.Fatalf("CRLF in a value: reset %v %v", reset, code)
	}
	id = h.send("GET", "/after", nil, false, ":authority", "app.example.com")
	if f, _, _, _ := h.answer(id); f[":status"] != "200" {
		t.Fatalf("after: %v", f)
	}
	if rec.sawPath("/smuggle") || rec.sawPath("/smuggled") {
		t.Fatal("a malformed request reached the backend")
	}
}
