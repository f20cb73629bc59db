package h2

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// The server is tried as a client would, over TLS: raw frames written with
// http2.Framer, and net/http's HTTP/2 Transport as an ordinary client.

var testCert = sync.OnceValue(func() tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "h2.test"},
		DNSNames: []string{"h2.test"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
})

// testServer is a Server on a TLS listener.
type testServer struct {
	srv  *Server
	addr string
}

func startServer(t *testing.T, h http.Handler, adjust ...func(*Server)) *testServer {
	t.Helper()
	srv := &Server{Handler: h, Log: slog.New(slog.DiscardHandler), MaxStreams: 8, MaxReadFrameSize: 64 << 10,
		MaxHeaderListSize: 16 << 10, Window: 1 << 20, PrefaceTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	for _, f := range adjust {
		f(srv)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{testCert()}, NextProtos: []string{"h2"}}
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				tc := tls.Server(c, cfg)
				if tc.Handshake() != nil {
					c.Close()
					return
				}
				srv.ServeConn(tc, context.Background())
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); srv.Close(); wg.Wait() })
	return &testServer{srv: srv, addr: ln.Addr().String()}
}

// client is an HTTP/2 client of s (net/http's, which is x/net/http2's
// client bundled).
func (s *testServer) client(t *testing.T) *http.Client {
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, ServerName: "h2.test"},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, s.addr)
		}}
	tr.Protocols = new(http.Protocols)
	tr.Protocols.SetHTTP2(true)
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// rawConn is a client connection that writes and reads raw frames.
type rawConn struct {
	t   *testing.T
	c   *tls.Conn
	fr  *http2.Framer
	enc *hpack.Encoder
	buf bytes.Buffer
}

// dial connects and sends the preface and settings (none by default).
func (s *testServer) dial(t *testing.T, settings ...http2.Setting) *rawConn {
	t.Helper()
	c, err := tls.Dial("tcp", s.addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	rc := &rawConn{t: t, c: c, fr: http2.NewFramer(c, c)}
	rc.enc = hpack.NewEncoder(&rc.buf)
	rc.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	rc.fr.SetMaxReadFrameSize(1 << 20)
	io.WriteString(c, http2.ClientPreface)
	rc.fr.WriteSettings(settings...)
	// The server's SETTINGS, its connection window, and our ACK.
	rc.expect(func(f http2.Frame) bool { sf, ok := f.(*http2.SettingsFrame); return ok && !sf.IsAck() })
	rc.fr.WriteSettingsAck()
	return rc
}

// next reads the next frame (failing the test on an error).
func (rc *rawConn) next() http2.Frame {
	rc.t.Helper()
	rc.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	f, err := rc.fr.ReadFrame()
	if err != nil {
		rc.t.Fatalf("read frame: %v", err)
	}
	return f
}

// expect reads frames until want accepts one, which it returns.
func (rc *rawConn) expect(want func(http2.Frame) bool) http2.Frame {
	rc.t.Helper()
	for {
		if f := rc.next(); want(f) {
			return f
		}
	}
}

// goAway reads frames until a GOAWAY, whose code it returns; the
// connection must end after it.
func (rc *rawConn) goAway() http2.ErrCode {
	rc.t.Helper()
	ga := rc.expect(func(f http2.Frame) bool { _, ok := f.(*http2.GoAwayFrame); return ok }).(*http2.GoAwayFrame)
	return ga.ErrCode
}

// floodUntilGoAway calls write (up to n times, until it fails) while
// frames are read for the GOAWAY that must end the connection, and
// returns its code (the test fails without one).
func (rc *rawConn) floodUntilGoAway(n int, write func() error) http2.ErrCode {
	rc.t.Helper()
	var code http2.ErrCode
	var readErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			rc.c.SetReadDeadline(time.Now().Add(20 * time.Second))
			f, err := rc.fr.ReadFrame()
			if err != nil {
				readErr = err
				return
			}
			if ga, ok := f.(*http2.GoAwayFrame); ok {
				code = ga.ErrCode
				return
			}
		}
	}()
	for range n {
		if write() != nil {
			break
		}
	}
	<-done
	if readErr != nil {
		rc.t.Fatalf("no GOAWAY: %v", readErr)
	}
	return code
}

// headers encodes fields (name, value pairs) as a header block.
func (rc *rawConn) headers(fields ...string) []byte {
	rc.buf.Reset()
	for i := 0; i < len(fields); i += 2 {
		rc.enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	return append([]byte(nil), rc.buf.Bytes()...)
}

// request sends a request's HEADERS on stream id; extra fields follow the
// usual pseudo-header fields.
func (rc *rawConn) request(id uint32, method string, end bool, extra ...string) {
	rc.t.Helper()
	fields := append([]string{":method", method, ":scheme", "https", ":path", "/", ":authority", "h2.test"}, extra...)
	rc.writeHeaders(id, end, rc.headers(fields...))
}

func (rc *rawConn) writeHeaders(id uint32, end bool, block []byte) {
	rc.t.Helper()
	if err := rc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block, EndStream: end, EndHeaders: true}); err != nil {
		rc.t.Fatal(err)
	}
}

// response reads stream id's response: status, body (giving back every
// window it uses) and whether it ended cleanly; a RST_STREAM's code is
// returned as err.
func (rc *rawConn) response(id uint32) (status string, body []byte, err error) {
	rc.t.Helper()
	for {
		switch f := rc.next().(type) {
		case *http2.MetaHeadersFrame:
			if f.StreamID != id {
				continue
			}
			if s := f.PseudoValue("status"); s != "" && s[0] != '1' {
				status = s
			}
			if f.StreamEnded() {
				return status, body, nil
			}
		case *http2.DataFrame:
			if f.StreamID != id {
				continue
			}
			body = append(body, f.Data()...)
			if n := f.Length; n > 0 {
				rc.fr.WriteWindowUpdate(0, n)
				rc.fr.WriteWindowUpdate(id, n)
			}
			if f.StreamEnded() {
				return status, body, nil
			}
		case *http2.RSTStreamFrame:
			if f.StreamID == id {
				return status, body, &codeError{code: f.ErrCode}
			}
		case *http2.GoAwayFrame:
			return status, body, &codeError{code: f.ErrCode, goAway: true}
		}
	}
}

// reset reads frames until stream id is reset, and returns the code.
func (rc *rawConn) reset(id uint32) http2.ErrCode {
	rc.t.Helper()
	_, _, err := rc.response(id)
	var ce *codeError
	if !errors.As(err, &ce) || ce.goAway {
		rc.t.Fatalf("stream %d: %v, want a reset", id, err)
	}
	return ce.code
}

// codeError is a stream's RST_STREAM or the connection's GOAWAY.
type codeError struct {
	code   http2.ErrCode
	goAway bool
}

func (e *codeError) Error() string {
	if e.goAway {
		return "GOAWAY " + e.code.String()
	}
	return "RST_STREAM " + e.code.String()
}

// echo answers with the request's method, path and body.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	w.Header().Set("X-Method", r.Method)
	w.Header().Set("X-Host", r.Host)
	w.Header().Set("X-Cookie", r.Header.Get("Cookie"))
	io.WriteString(w, r.URL.Path+":")
	w.Write(body)
})

func TestServer_Transport(t *testing.T) {
	s := startServer(t, echo)
	client := s.client(t)
	for _, size := range []int{0, 10, 16 << 10, 100 << 10, 3 << 20} {
		body := strings.Repeat("x", size)
		resp, err := client.Post("https://h2.test/p", "text/plain", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || string(got) != "/p:"+body || resp.Header.Get("X-Method") != "POST" || resp.Header.Get("Date") == "" {
			t.Fatalf("size %d: status %d, %d bytes, err %v, header %v", size, resp.StatusCode, len(got), err, resp.Header)
		}
	}
	// Many streams at once on one connection, beyond MaxStreams (the
	// Transport waits for a free stream).
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := strings.Repeat("y", i*1000)
			resp, err := client.Post("https://h2.test/c", "text/plain", strings.NewReader(body))
			if err != nil {
				errs <- err
				return
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(got) != "/c:"+body {
				errs <- errors.New("wrong body")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestServer_SettingsPingAndPreface(t *testing.T) {
	s := startServer(t, echo)
	rc := s.dial(t)
	rc.expect(func(f http2.Frame) bool { sf, ok := f.(*http2.SettingsFrame); return ok && sf.IsAck() })
	rc.fr.WritePing(false, [8]byte{1, 2, 3, 4, 5, 6, 7, 8})
	p := rc.expect(func(f http2.Frame) bool { _, ok := f.(*http2.PingFrame); return ok }).(*http2.PingFrame)
	if !p.IsAck() || p.Data != [8]byte{1, 2, 3, 4, 5, 6, 7, 8} {
		t.Fatalf("ping answer %+v", p)
	}
	// A second SETTINGS is acknowledged too.
	rc.fr.WriteSettings(http2.Setting{ID: http2.SettingHeaderTableSize, Val: 0})
	rc.expect(func(f http2.Frame) bool { sf, ok := f.(*http2.SettingsFrame); return ok && sf.IsAck() })
	// With a table size of 0 the answer is still readable.
	rc.fr.ReadMetaHeaders.SetMaxDynamicTableSize(0)
	rc.request(1, "GET", true)
	if status, body, err := rc.response(1); status != "200" || string(body) != "/:" || err != nil {
		t.Fatalf("%s %q %v", status, body, err)
	}

	// A wrong preface ends the connection with PROTOCOL_ERROR.
	c, err := tls.Dial("tcp", s.addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: h2.test\r\n\r\n")
	bad := &rawConn{t: t, c: c, fr: http2.NewFramer(c, c)}
	if code := bad.goAway(); code != http2.ErrCodeProtocol {
		t.Fatalf("GOAWAY %v, want PROTOCOL_ERROR", code)
	}
	// A first frame other than SETTINGS too.
	c2, err := tls.Dial("tcp", s.addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	io.WriteString(c2, http2.ClientPreface)
	bad2 := &rawConn{t: t, c: c2, fr: http2.NewFramer(c2, c2)}
	bad2.fr.WritePing(false, [8]byte{})
	if code := bad2.goAway(); code != http2.ErrCodeProtocol {
		t.Fatalf("GOAWAY %v, want PROTOCOL_ERROR", code)
	}
}
