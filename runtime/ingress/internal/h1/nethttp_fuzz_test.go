package h1

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// FuzzRequestAsNetHTTP holds ParseRequest to one rule (issue 18): whatever
// it accepts, net/http's server reads the same way — method, target,
// protocol, host, every header field, the framing (Content-Length or
// chunked), the connection's fate, where the head ends and the body's
// bytes. Any disagreement must be a refusal by ParseRequest: the gateway
// forwards what it accepts to backends that may read it as net/http does.
// Unlike FuzzParseRequest it covers Transfer-Encoding, and it runs the
// bytes through a real http.Server, so the server's own refusals (no
// Host, a malformed Host, a protocol it does not speak) count too.
func FuzzRequestAsNetHTTP(f *testing.F) {
	for _, s := range []string{
		"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n",
		"GET /a?b=c HTTP/1.1\r\nHost: example.com:8080\r\nAccept: */*\r\nX-Two: 1\r\nx-two: 2\r\n\r\n",
		"POST /f HTTP/1.1\r\nHost: h\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 7\r\n\r\na=1&b=2",
		"POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n0\r\nTrailer: t\r\n\r\nGET / HTTP/1.1\r\n",
		"POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
		"POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n",
		"POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n",
		"POST /c HTTP/1.0\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"GET http://example.com/a HTTP/1.1\r\nHost: other\r\n\r\n",
		"GET / HTTP/1.1\r\n\r\n",
		"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
		"GET / HTTP/2.0\r\nHost: h\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: evil@h\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: h\r\nX: a\x7fb\r\n\r\n",
		"OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n",
		"PUT /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Request
		if ParseRequest(b, 16<<10, &r) != nil {
			return
		}
		if refusal := netHTTPRefusal(t, b); refusal != "" {
			t.Fatalf("ParseRequest accepted %q; net/http's server answers %q", b, refusal)
		}
		src := bytes.NewReader(b)
		br := bufio.NewReader(src)
		req, err := http.ReadRequest(br)
		if err != nil {
			t.Fatalf("%q: net/http's server took it, ReadRequest did not: %v", b, err)
		}
		if req.Method != string(r.Method) || req.RequestURI != string(r.Target) || req.ProtoMajor != 1 || req.ProtoMinor != r.Minor {
			t.Fatalf("%q: request line %q %q HTTP/1.%d; net/http %q %q %s", b, r.Method, r.Target, r.Minor, req.Method, req.RequestURI, req.Proto)
		}
		if want := routingHost(&r); req.Host != want {
			t.Fatalf("%q: host %q; net/http %q", b, want, req.Host)
		}
		if want := fieldsAsNetHTTP(&r); !maps.EqualFunc(req.Header, want, slices.Equal) {
			t.Fatalf("%q: fields %q; net/http %q", b, want, req.Header)
		}
		netChunked := slices.Equal(req.TransferEncoding, []string{"chunked"})
		if r.Chunked != netChunked || r.TransferEncoding != (len(req.TransferEncoding) > 0) {
			t.Fatalf("%q: Transfer-Encoding %v, chunked %v; net/http %q", b, r.TransferEncoding, r.Chunked, req.TransferEncoding)
		}
		if !r.Chunked && req.ContentLength != max(r.ContentLength, 0) {
			t.Fatalf("%q: Content-Length %d; net/http %d", b, r.ContentLength, req.ContentLength)
		}
		if req.Close != r.Close {
			t.Fatalf("%q: close %v; net/http %v", b, r.Close, req.Close)
		}
		if read := len(b) - src.Len() - br.Buffered(); read != r.HeadLen {
			t.Fatalf("%q: head of %d bytes; net/http read %d", b, r.HeadLen, read)
		}
		end, body, whole := bodyAsH1(t, b, &r)
		if !whole {
			return
		}
		got, err := io.ReadAll(req.Body)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("%q: body %q; net/http %q, %v", b, body, got, err)
		}
		if read := len(b) - src.Len() - br.Buffered(); read != end {
			t.Fatalf("%q: request of %d bytes; net/http read %d", b, end, read)
		}
	})
}

// bodyAsH1 returns where the request ends, its body, and whether b holds
// all of it, as h1 frames it.
func bodyAsH1(t *testing.T, b []byte, r *Request) (end int, body []byte, whole bool) {
	rest := b[r.HeadLen:]
	switch {
	case r.Chunked:
		var c Chunked
		n, done, err := c.Scan(rest)
		if !done || err != nil {
			return 0, nil, false // FuzzChunked holds Scan to net/http
		}
		body, err := io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(rest[:n])))
		if err != nil {
			t.Fatalf("%q: a chunked body Scan ends at %d does not read: %v", b, n, err)
		}
		return r.HeadLen + n, body, true
	case r.ContentLength > 0 && int64(len(rest)) >= r.ContentLength:
		return r.HeadLen + int(r.ContentLength), rest[:r.ContentLength], true
	case r.ContentLength > 0:
		return 0, nil, false
	}
	return r.HeadLen, nil, true
}

// netHTTPRefusal gives b to an http.Server as one connection that ends
// after b and returns the status line of its first answer if that is a
// refusal of the head (4xx or 5xx but 417; its handler answers 200),
// else "".
func netHTTPRefusal(t *testing.T, b []byte) string {
	c := &bytesConn{r: bytes.NewReader(b), closed: make(chan struct{})}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
	})}
	go srv.Serve(&oneConnListener{c: c, done: c.closed})
	defer srv.Close()
	select {
	case <-c.closed:
	case <-time.After(10 * time.Second):
		t.Fatalf("%q: net/http's server did not finish the connection", b)
	}
	answer, _, _ := strings.Cut(c.written(), "\r\n")
	// Past a 100 Continue, the first status line after it decides.
	for strings.HasPrefix(answer, "HTTP/1.1 100 ") {
		_, rest, _ := strings.Cut(c.written(), "\r\n\r\n")
		answer, _, _ = strings.Cut(rest, "\r\n")
	}
	// 417 declines an expectation the head states clearly: a proxy
	// passes it on, as the gateway does.
	if len(answer) >= 12 && (answer[9] == '4' || answer[9] == '5') && answer[9:12] != "417" {
		return answer
	}
	return ""
}

// bytesConn is a connection that reads b, then its end, and keeps what
// is written to it.
type bytesConn struct {
	r      *bytes.Reader
	mu     sync.Mutex
	w      bytes.Buffer
	once   sync.Once
	closed chan struct{}
}

func (c *bytesConn) Read(p []byte) (int, error) { return c.r.Read(p) }
func (c *bytesConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.w.Write(p)
}
func (c *bytesConn) written() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.w.String()
}
func (c *bytesConn) Close() error                     { c.once.Do(func() { close(c.closed) }); return nil }
func (c *bytesConn) LocalAddr() net.Addr              { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }
func (c *bytesConn) RemoteAddr() net.Addr             { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }
func (c *bytesConn) SetDeadline(time.Time) error      { return nil }
func (c *bytesConn) SetReadDeadline(time.Time) error  { return nil }
func (c *bytesConn) SetWriteDeadline(time.Time) error { return nil }

// oneConnListener accepts c once, then waits until done.
type oneConnListener struct {
	c    net.Conn
	done <-chan struct{}
	once sync.Once
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	var c net.Conn
	l.once.Do(func() { c = l.c })
	if c != nil {
		return c, nil
	}
	<-l.done
	return nil, errors.New("listener closed")
}
func (l *oneConnListener) Close() error   { return nil }
func (l *oneConnListener) Addr() net.Addr { return l.c.LocalAddr() }

// routingHost is the host the request is for by RFC 9112 3.2.2: an
// absolute-form target's authority, otherwise the Host field.
func routingHost(r *Request) string {
	t := string(r.Target)
	for _, scheme := range []string{"http://", "https://"} {
		if len(t) >= len(scheme) && strings.EqualFold(t[:len(scheme)], scheme) {
			authority := t[len(scheme):]
			if i := strings.IndexAny(authority, "/?#"); i >= 0 {
				authority = authority[:i]
			}
			return authority
		}
	}
	return string(r.Host)
}

// fieldsAsNetHTTP is r's header fields as net/http's Request.Header holds
// them: canonical names, values in order, without Host (req.Host has it)
// and, for a chunked request, without Transfer-Encoding and
// Content-Length (req.TransferEncoding has them) and Trailer (the keys of
// req.Trailer).
func fieldsAsNetHTTP(r *Request) http.Header {
	h := http.Header{}
	for _, f := range r.Fields {
		h.Add(string(f.Name), string(f.Value))
	}
	h.Del("Host")
	if r.Chunked {
		h.Del("Transfer-Encoding")
		h.Del("Content-Length")
		h.Del("Trailer")
	}
	return h
}
