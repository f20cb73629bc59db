package h1

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
)

// FuzzParseRequest checks that whatever ParseRequest accepts net/http
// reads the same way: the same request line, host (the absolute-form
// authority over the Host field, in both), framing, connection fate and
// head length. Being stricter than net/http is allowed; reading a head
// differently would let a request be smuggled past the gateway, which
// refuses what ParseRequest refuses and passes the rest on to net/http.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		head("GET / HTTP/1.1", "Host: example.com"),
		head("GET /a/b?c=d&e=%41 HTTP/1.1", "Host: example.com:8080", "User-Agent: curl/8.5.0", "Accept: */*") + "next",
		head("POST /api/v1/items HTTP/1.1", "Host: api.example.com", "Content-Type: application/json", "Content-Length: 13") + `{"name":"a"}` + "\r\n",
		head("PUT /x HTTP/1.1", "Host: h", "Content-Length: 3", "Expect: 100-continue") + "abc",
		head("GET / HTTP/1.0", "Host: h", "Connection: keep-alive"),
		head("GET / HTTP/1.0"),
		head("GET /ws HTTP/1.1", "Host: h", "Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13"),
		head("DELETE /a HTTP/1.1", "host: h", "connection: close, x-foo", "x-foo: 1"),
		head("OPTIONS * HTTP/1.1", "Host: h"),
		head("GET / HTTP/1.1", "Host: h", "Content-Length: 0", "X-Latin: caf\xe9"),
		head("POST / HTTP/1.1", "Host: h", "Transfer-Encoding: chunked") + "0\r\n\r\n",
		head("GET / HTTP/1.1", "Host: h", "Host: i"),
		head("GET / HTTP/1.1", "Host: h", "X: a", " folded"),
		"GET / HTTP/1.1\nHost: h\n\n",
		head("GET http://other/ HTTP/1.1", "Host: h"),
		head("GET /%zz HTTP/1.1", "Host: h"),
		head("GET /a#frag HTTP/1.1", "Host: h"),
		head("GET http://a.example:80/x?y HTTP/1.1", "Host: b.example"),
		head("GET http://evil@victim/ HTTP/1.1", "Host: victim"),
		head("GET / HTTP/1.1", "Host: evil@victim"),
		head("POST / HTTP/1.1", "Host: h", "Content-Length: 3", "Transfer-Encoding: chunked") + "0\r\n\r\n",
		head("POST / HTTP/1.1", "Host: h", "Transfer-Encoding: gzip, chunked") + "0\r\n\r\n",
		head("GET / HTTP/2.0", "Host: h"),
		head(`GET http://h/0"0?q="%41 HTTP/1.1`, "Host: h"),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Request
		if err := ParseRequest(b, testMax, &r); err != nil {
			return
		}
		src := bytes.NewReader(b)
		br := bufio.NewReader(src)
		req, err := http.ReadRequest(br)
		if err != nil {
			t.Fatalf("ParseRequest accepted %q; net/http: %v", b, err)
		}
		if req.Method != string(r.Method) || req.RequestURI != string(r.Target) {
			t.Errorf("request line %q %q; net/http %q %q", r.Method, r.Target, req.Method, req.RequestURI)
		}
		if req.ProtoMajor != 1 || req.ProtoMinor != r.Minor {
			t.Errorf("HTTP/1.%d; net/http %s", r.Minor, req.Proto)
		}
		if req.Host != string(r.RoutingHost()) {
			t.Errorf("host %q (Host %q); net/http %q", r.RoutingHost(), r.Host, req.Host)
		}
		if r.Authority != nil {
			// net/url re-escapes what it decodes ('"' becomes %22), so
			// compare what the path and query mean, not their spelling.
			// An authority without a path is "/" to both, spelled "" by net/url.
			path, query, _ := strings.Cut(string(r.Path), "?")
			decoded, err := url.PathUnescape(path)
			if err != nil || decoded != cmp.Or(req.URL.Path, "/") || query != req.URL.RawQuery {
				t.Errorf("absolute form path %q; net/http path %q query %q", r.Path, req.URL.Path, req.URL.RawQuery)
			}
		}
		switch {
		case r.TransferEncoding:
			if req.ContentLength != -1 || len(req.TransferEncoding) != 1 || req.TransferEncoding[0] != "chunked" {
				t.Errorf("chunked; net/http length %d, codings %q", req.ContentLength, req.TransferEncoding)
			}
		// net/http gives a request without Content-Length a length of 0.
		case req.ContentLength != max(r.ContentLength, 0):
			t.Errorf("ContentLength %d; net/http %d", r.ContentLength, req.ContentLength)
		}
		if req.Close != r.Close {
			t.Errorf("Close %v; net/http %v", r.Close, req.Close)
		}
		if read := len(b) - src.Len() - br.Buffered(); read != r.HeadLen {
			t.Fatalf("HeadLen %d; net/http read a head of %d", r.HeadLen, read)
		}
		if cl := r.ContentLength; cl > 0 && int64(len(b)-r.HeadLen) >= cl {
			body, err := io.ReadAll(req.Body)
			if err != nil || !bytes.Equal(body, b[r.HeadLen:r.HeadLen+int(cl)]) {
				t.Errorf("body %q; net/http %q, %v", b[r.HeadLen:r.HeadLen+int(cl)], body, err)
			}
		}
	})
}

// FuzzChunked checks Chunked.Scan against net/http, which reads chunks
// with its chunked reader (httputil.NewChunkedReader) and the trailer
// section with textproto. Where Scan finds an end, net/http must read the
// body cleanly and end at the same byte. Where net/http reads a body
// cleanly, Scan may refuse it only for what it refuses on purpose
// (strictRefusal).
func FuzzChunked(f *testing.F) {
	for _, s := range []string{
		"0\r\n\r\n",
		"5\r\nhello\r\n0\r\n\r\n",
		"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\nGET / HTTP/1.1\r\n\r\n",
		"A\r\n0123456789\r\na\r\nabcdefghij\r\n0\r\n\r\n",
		"7\r\n\r\n0\r\n\r\n\r\n0\r\n\r\n",
		"5;name=value;q=\"a b\"\r\nhello\r\n0;last\r\n\r\n",
		"5\r\nhello\r\n0\r\nChecksum: abc\r\nX-Other:\r\n\r\n",
		"5 \r\nhello\r\n0\r\n\r\n",
		"5 ;a\r\nhello\r\n0\r\n\r\n",
		"5\nhello\n0\n\n",
		"0\r\nA: 1\n\r\n\r\n",
		"0\r\nA: 1\r\n 2\r\n\r\n",
		"0000000000000005\r\nhello\r\n0\r\n\r\n",
		"5\r\nhelloX\r\n0\r\n\r\n",
		"ffffffffffffffff\r\n",
		"0\r\nChecksum\r\n\r\n",
		"0\r\nA : 1\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var c Chunked
		n, done, err := c.Scan(b)
		if bn, bdone, berr := scanBytes(b); bn != n || bdone != done || berr != err {
			t.Fatalf("whole: %d %v %v; byte by byte: %d %v %v", n, done, err, bn, bdone, berr)
		}
		goN, goData, goErr := readChunkedNetHTTP(b)
		if done {
			if goErr != nil || goN != n {
				t.Fatalf("Scan ended at %d; net/http at %d: %v", n, goN, goErr)
			}
			data, err := io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(b[:n])))
			if err != nil || !bytes.Equal(data, goData) {
				t.Fatalf("chunked reader on b[:%d]: %q, %v; the request body %q", n, data, err, goData)
			}
			return
		}
		if goErr != nil {
			return
		}
		if err == nil {
			t.Fatalf("net/http read a body of %d bytes; Scan has not ended after %d", goN, n)
		}
		if n >= goN || !strictRefusal(&c, b[n]) {
			t.Fatalf("net/http read a body of %d bytes; Scan refused byte %d (%q) in state %d", goN, n, b[n], c.state)
		}
	})
}

// strictRefusal reports whether Scan, stopped in c at byte b, refused
// what net/http accepts on purpose: a 16th size digit, whitespace after
// the size, a control character in an extension, and in the trailer
// section a bare LF, a folded line or a space in a name.
func strictRefusal(c *Chunked, b byte) bool {
	switch c.state {
	case chunkSize:
		return c.digits == 15 || c.digits > 0 && (b == ' ' || b == '\t')
	case chunkExt:
		return !isFieldValueByte(b)
	case trailerStart:
		return b == '\n' || b == ' ' || b == '\t'
	case trailerName:
		// textproto takes a name with spaces, uncanonicalised.
		return b == '\n' || b == ' '
	case trailerLine, trailerLineLF:
		return b == '\n'
	}
	return false
}

// readChunkedNetHTTP reads b as the chunked body of a request with
// net/http and returns how many bytes of b it took and the data.
func readChunkedNetHTTP(b []byte) (int, []byte, error) {
	const head = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
	src := bytes.NewReader(append([]byte(head), b...))
	br := bufio.NewReader(src)
	req, err := http.ReadRequest(br)
	if err != nil {
		return 0, nil, errors.Join(errors.New("reading the fixed head"), err)
	}
	data, err := io.ReadAll(req.Body)
	if err != nil {
		return 0, nil, err
	}
	return int(src.Size()) - src.Len() - br.Buffered() - len(head), data, nil
}
