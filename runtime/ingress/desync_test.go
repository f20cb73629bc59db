package ingress

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The focused regressions of issue 18 (the raw-socket suite that attacks
// the gateway side by side with nginx is test/desync): each sends what
// broke the gateway before, on the plain-HTTP listener (the event loop,
// and net/http after a hand-over) and on TLS (net/http), and checks what
// the backend received.

// recorder is a backend that records every request it receives, its body
// and how the body ended.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
	port int
	// streamEnded receives how each /stream response ended: nil when it
	// was written whole, the write error when its connection closed (an
	// /endless one ends only that way).
	streamEnded chan error
}

type recorded struct {
	method, path, xff, realIP, proto, xhost string
	body                                    int
	bodyErr                                 error
}

func startRecorder(t *testing.T) *recorder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{port: ln.Addr().(*net.TCPAddr).Port, streamEnded: make(chan error, 16)}
	srv := &http.Server{Handler: r}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return r
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n, err := io.Copy(io.Discard, r.Body)
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, recorded{method: r.Method, path: r.URL.Path, xff: r.Header.Get("X-Forwarded-For"), realIP: r.Header.Get("X-Real-Ip"),
		proto: r.Header.Get("X-Forwarded-Proto"), xhost: r.Header.Get("X-Forwarded-Host"), body: int(n), bodyErr: err})
	rec.mu.Unlock()
	switch r.URL.Path {
	case "/stream":
		// A long chunked response, written as fast as it is taken.
		chunk := []byte(strings.Repeat("s", 16<<10))
		for range 1024 {
			if _, err := w.Write(chunk); err != nil {
				rec.streamEnded <- err
				return
			}
			w.(http.Flusher).Flush()
		}
		rec.streamEnded <- nil
	case "/endless":
		// A stream that goes on for as long as it is taken.
		chunk := []byte(strings.Repeat("e", 16<<10))
		for {
			if _, err := w.Write(chunk); err != nil {
				rec.streamEnded <- err
				return
			}
			w.(http.Flusher).Flush()
		}
	case "/truncated":
		conn, bw, _ := w.(http.Hijacker).Hijack()
		bw.WriteString("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nonly part of a c")
		bw.Flush()
		conn.Close()
	default:
		fmt.Fprintf(w, "%s %s %d", r.Method, r.URL.Path, n)
	}
}

// received returns what reached the backend so far.
func (rec *recorder) received() []recorded {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]recorded(nil), rec.reqs...)
}

// sawPath says whether a request for path reached the backend.
func (rec *recorder) sawPath(path string) bool {
	for _, r := range rec.received() {
		if r.path == path {
			return true
		}
	}
	return false
}

// waitRequest waits for the request for path and returns it.
func (rec *recorder) waitRequest(t *testing.T, path string) recorded {
	t.Helper()
	var got recorded
	waitFor(t, func() bool {
		for _, r := range rec.received() {
			if r.path == path {
				got = r
				return true
			}
		}
		return false
	})
	return got
}

// via is a way to reach the gateway: its plain-HTTP listener or TLS.
type via struct {
	name string
	dial func(t *testing.T, host string) (net.Conn, *bufio.Reader)
}

func (b *testBundle) vias() []via {
	return b.viasNamed("app.example.com")
}

// viasNamed is vias whose TLS connections name sni.
func (b *testBundle) viasNamed(sni string) []via {
	return []via{
		{"plain", func(t *testing.T, _ string) (net.Conn, *bufio.Reader) { return dialGateway(t, b.addrs.HTTP) }},
		// The server name of a routed host (a name without a route gets
		// no certificate), whatever Host the request names.
		{"TLS", func(t *testing.T, _ string) (net.Conn, *bufio.Reader) {
			return dialTLS(t, b.addrs.HTTPS, sni)
		}},
	}
}

// dialTLS opens an HTTP/1.1 TLS connection to the gateway for host.
func dialTLS(t *testing.T, addr, host string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{ServerName: host, InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(15 * time.Second))
	return conn, bufio.NewReader(conn)
}

// readAll reads what comes back on conn until it closes (closed true) or
// stays silent for quiet.
func readAll(conn net.Conn, br *bufio.Reader, quiet time.Duration) (got string, closed bool) {
	var sb strings.Builder
	buf := make([]byte, 32<<10)
	for {
		conn.SetReadDeadline(time.Now().Add(quiet))
		n, err := br.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			var ne net.Error
			return sb.String(), !(errors.As(err, &ne) && ne.Timeout())
		}
	}
}

// desyncGateway is a gateway with TLS, an operator certificate for
// secure.example.com (whose plain HTTP is redirected), and routes to a
// recorder: app (its backend), redir (a redirect), dead (a backend that
// refuses connections) and secure.
func desyncGateway(t *testing.T, limits Limits) (*testBundle, *recorder) {
	t.Helper()
	certDir := t.TempDir()
	writeOperatorCert(t, certDir, "secure.example.com")
	b := setupWith(t, func(cfg *Config) {
		cfg.HTTPSAddr = "127.0.0.1:0"
		cfg.TLS.InternalCA = true
		cfg.TLS.CertDir = certDir
		cfg.Limits = limits
	})
	rec := startRecorder(t)
	b.resolver.set("app", "127.0.0.1")
	b.resolver.set("dead", "127.0.0.1")
	route := func(host, service string, port int) Route {
		return Route{Hostname: host, Visibility: VisibilityPublic, Backend: &Backend{Service: service, Port: port}}
	}
	b.publish(t, 1,
		route("app.example.com", "app", rec.port),
		route("secure.example.com", "app", rec.port),
		route("dead.example.com", "dead", freePort(t)),
		Route{Hostname: "redir.example.com", Visibility: VisibilityPublic, Redirect: &Redirect{To: "https://elsewhere.example.com", PreservePath: true}},
	)
	return b, rec
}

func writeOperatorCert(t *testing.T, dir, name string) {
	t.Helper()
	cert := selfSigned(t, name)
	key, err := x509.MarshalECPrivateKey(cert.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	crt := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})
	if err := os.WriteFile(filepath.Join(dir, name+".crt"), crt, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: key}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestGateway_UnreadBodyIsNeverARequest is finding 1: a body the gateway
// answers without reading (a 404, a redirect, the redirect of plain HTTP
// to HTTPS, a 502) must never be read as the next request. The hidden
// request is the body's tail, as in the example.
func TestGateway_UnreadBodyIsNeverARequest(t *testing.T) {
	t.Parallel()
	b, rec := desyncGateway(t, Limits{})
	hidden := "GET /smuggled HTTP/1.1\r\nHost: app.example.com\r\n\r\n"
	bodies := map[string]string{
		"Content-Length": fmt.Sprintf("Content-Length: %d\r\n\r\n", 8192+len(hidden)) + strings.Repeat("a", 8192) + hidden,
		"chunked":        fmt.Sprintf("Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", 8192+len(hidden), strings.Repeat("a", 8192)+hidden) + "0\r\n\r\n",
	}
	answers := map[string]string{
		"nowhere.example.com": "HTTP/1.1 404 ",
		"redir.example.com":   "HTTP/1.1 308 ",
		"secure.example.com":  "HTTP/1.1 308 ", // plain HTTP only
		"dead.example.com":    "HTTP/1.1 502 ",
	}
	for _, v := range b.vias() {
		for host, want := range answers {
			if v.name == "TLS" && host == "secure.example.com" {
				continue
			}
			for name, body := range bodies {
				t.Run(v.name+"/"+host+"/"+name, func(t *testing.T) {
					t.Parallel()
					conn, br := v.dial(t, host)
					io.WriteString(conn, "POST /x HTTP/1.1\r\nHost: "+host+"\r\n"+body)
					got, _ := readAll(conn, br, time.Second)
					if !strings.HasPrefix(got, want) || strings.Count(got, "HTTP/1.1 ") != 1 {
						t.Fatalf("got %q, want one answer %q", got, want)
					}
				})
			}
		}
	}
	t.Cleanup(func() {
		if rec.sawPath("/smuggled") {
			t.Errorf("the backend received the request hidden in a body: %+v", rec.received())
		}
	})
}

// TestGateway_BodyLimits is finding 4: a body over the limit is answered
// 413, and one that stops coming is cut off after the body idle timeout
// with its backend connection released.
func TestGateway_BodyLimits(t *testing.T) {
	t.Parallel()
	const idle = 300 * time.Millisecond
	b, rec := desyncGateway(t, Limits{MaxBodyBytes: 64 << 10, BodyIdleTimeout: idle})
	for _, v := range b.vias() {
		t.Run(v.name+"/Content-Length over the limit", func(t *testing.T) {
			t.Parallel()
			path := "/large-" + v.name
			conn, br := v.dial(t, "app.example.com")
			io.WriteString(conn, "POST "+path+" HTTP/1.1\r\nHost: app.example.com\r\nContent-Length: 100000\r\n\r\n"+strings.Repeat("b", 1000))
			got, closed := readAll(conn, br, 2*time.Second)
			if !strings.HasPrefix(got, "HTTP/1.1 413 ") || !closed {
				t.Fatalf("got %q (closed %v), want 413 and the connection closed", got, closed)
			}
			if rec.sawPath(path) {
				t.Fatal("the request reached the backend")
			}
		})
		t.Run(v.name+"/Content-Length over the limit, sent whole", func(t *testing.T) {
			t.Parallel()
			// The client sends on while the gateway answers: closing then
			// must not reset the connection before the answer is read.
			conn, br := v.dial(t, "app.example.com")
			go io.WriteString(conn, "POST /large HTTP/1.1\r\nHost: app.example.com\r\nContent-Length: 1000000\r\n\r\n"+strings.Repeat("b", 1000000))
			// Read late: a connection closed with the body unread is reset
			// by then, and the answer lost.
			time.Sleep(200 * time.Millisecond)
			resp, err := http.ReadResponse(br, nil)
			if err != nil || resp.StatusCode != 413 {
				t.Fatalf("answer %v, %v; want 413", resp, err)
			}
		})
		t.Run(v.name+"/chunked over the limit", func(t *testing.T) {
			t.Parallel()
			path := "/chunked-" + v.name
			conn, br := v.dial(t, "app.example.com")
			chunk := fmt.Sprintf("%x\r\n%s\r\n", 16<<10, strings.Repeat("c", 16<<10))
			io.WriteString(conn, "POST "+path+" HTTP/1.1\r\nHost: app.example.com\r\nTransfer-Encoding: chunked\r\n\r\n"+strings.Repeat(chunk, 6))
			got, _ := readAll(conn, br, 2*time.Second)
			if !strings.HasPrefix(got, "HTTP/1.1 413 ") {
				t.Fatalf("got %q, want 413", got)
			}
			// The backend got the start of the body, never its end.
			if r := rec.waitRequest(t, path); r.bodyErr == nil || r.body > 64<<10 {
				t.Fatalf("the backend read %d bytes of the body, error %v", r.body, r.bodyErr)
			}
		})
		for _, size := range []int{20000, 4000} {
			t.Run(fmt.Sprintf("%s/a %d-byte body that stops coming", v.name, size), func(t *testing.T) {
				t.Parallel()
				path := fmt.Sprintf("/slow-%s-%d", v.name, size)
				conn, br := v.dial(t, "app.example.com")
				io.WriteString(conn, fmt.Sprintf("POST %s HTTP/1.1\r\nHost: app.example.com\r\nContent-Length: %d\r\n\r\n%s", path, size, strings.Repeat("d", size/2)))
				stalled := time.Now()
				got, closed := readAll(conn, br, 5*time.Second)
				if !strings.HasPrefix(got, "HTTP/1.1 408 ") || !closed {
					t.Fatalf("got %q (closed %v) %s after the body stalled, want 408 and the connection closed", got, closed, time.Since(stalled))
				}
				// (The loop's clock is read once per wake-up: a little slack.)
				if d := time.Since(stalled); d < idle-50*time.Millisecond {
					t.Fatalf("cut off after %s, before the idle timeout", d)
				}
				// A small body is read whole before it is sent; a larger
				// one streams, and the backend sees it break off.
				if size > maxBufferedRequestBody {
					if r := rec.waitRequest(t, path); r.bodyErr == nil {
						t.Fatalf("the backend's request ended cleanly with %d bytes: its connection is held", r.body)
					}
				}
			})
		}
	}
}

// TestGateway_EveryHTTP1ConnectionIsStrict is finding 5 and its TLS
// counterpart: a head the strict parser refuses is refused on every
// HTTP/1 connection — one the event loop handed over to net/http after a
// first request, and TLS — and never reaches the backend.
func TestGateway_EveryHTTP1ConnectionIsStrict(t *testing.T) {
	t.Parallel()
	b, rec := desyncGateway(t, Limits{})
	const host = "Host: app.example.com\r\n"
	heads := []struct {
		name, head string
		status     string
	}{
		{"Content-Length and chunked", "POST /refused HTTP/1.1\r\n" + host + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "400"},
		{"a folded Transfer-Encoding", "POST /refused HTTP/1.1\r\n" + host + "Content-Length: 5\r\nTransfer-Encoding: identity\r\n chunked\r\n\r\n0\r\n\r\n", "400"},
		{"chunked in HTTP/1.0", "POST /refused HTTP/1.0\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "400"},
		{"two Content-Lengths", "POST /refused HTTP/1.1\r\n" + host + "Content-Length: 1\r\nContent-Length: 1\r\n\r\nx", "400"},
		{"two Host fields", "GET /refused HTTP/1.1\r\n" + host + "Host: other.example.com\r\n\r\n", "400"},
		{"userinfo in Host", "GET /refused HTTP/1.1\r\nHost: evil.example.com@app.example.com\r\n\r\n", "400"},
		{"gzip, chunked", "POST /refused HTTP/1.1\r\n" + host + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", "501"},
		{"HTTP/2.0", "GET /refused HTTP/2.0\r\n" + host + "\r\n", "505"},
		{"bare CR", "GET /refused HTTP/1.1\r\n" + host + "X: a\rb\r\n\r\n", "400"},
	}
	// A first request net/http serves: HTTP/1.0 with keep-alive, which
	// the event loop hands over.
	const first = "GET /first HTTP/1.0\r\n" + host + "Connection: keep-alive\r\n\r\n"
	for _, v := range b.vias() {
		for _, h := range heads {
			t.Run(v.name+"/"+h.name, func(t *testing.T) {
				t.Parallel()
				conn, br := v.dial(t, "app.example.com")
				io.WriteString(conn, first+h.head)
				got, closed := readAll(conn, br, 2*time.Second)
				if !strings.HasPrefix(got, "HTTP/1.1 200 ") || !strings.Contains(got, "HTTP/1.1 "+h.status+" ") || strings.Count(got, "HTTP/1.") != 2 || !closed {
					t.Fatalf("got %q (closed %v), want 200, then %s and the connection closed", got, closed, h.status)
				}
			})
		}
	}
	t.Cleanup(func() {
		if rec.sawPath("/refused") {
			t.Errorf("a refused head reached the backend: %+v", rec.received())
		}
	})
}

// TestGateway_DroppedStreamIsNeverPooled is finding 2: a client that
// leaves in the middle of a streamed response leaves its backend
// connection with the rest of the response in it; it must be closed, never
// given to the next request.
func TestGateway_DroppedStreamIsNeverPooled(t *testing.T) {
	t.Parallel()
	b, rec := desyncGateway(t, Limits{})
	for _, v := range b.vias() {
		t.Run(v.name, func(t *testing.T) {
			conn, br := v.dial(t, "app.example.com")
			io.WriteString(conn, "GET /stream HTTP/1.1\r\nHost: app.example.com\r\n\r\n")
			if _, err := io.ReadFull(br, make([]byte, 20<<10)); err != nil {
				t.Fatal(err)
			}
			conn.Close()
			select {
			case err := <-rec.streamEnded:
				if err == nil {
					t.Fatal("the backend wrote the whole stream to nobody")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the backend connection of the dropped stream is still open")
			}
			for i := range 5 {
				conn, br := v.dial(t, "app.example.com")
				path := fmt.Sprintf("/after-%s-%d", v.name, i)
				resp, body := rawExchange(t, br, conn, "POST "+path+" HTTP/1.1\r\nHost: app.example.com\r\nContent-Length: 2\r\n\r\nhi")
				if want := "POST " + path + " 2"; resp.StatusCode != 200 || body != want {
					t.Fatalf("the next request got %d %q, want %q", resp.StatusCode, body, want)
				}
			}
		})
	}
}

// TestGateway_TruncatedResponseIsNotCompleted is finding 6: a backend that
// dies in the middle of a chunk ends the client's connection; the gateway
// never writes the last chunk for it.
func TestGateway_TruncatedResponseIsNotCompleted(t *testing.T) {
	t.Parallel()
	b, _ := desyncGateway(t, Limits{})
	for _, v := range b.vias() {
		for _, req := range []string{
			"GET /truncated HTTP/1.1\r\nHost: app.example.com\r\n\r\n",
			// Handed over to net/http on the plain listener.
			"GET /truncated HTTP/1.0\r\nHost: app.example.com\r\nConnection: keep-alive\r\n\r\n",
		} {
			conn, br := v.dial(t, "app.example.com")
			io.WriteString(conn, req)
			got, closed := readAll(conn, br, 5*time.Second)
			if !closed || strings.HasSuffix(got, "0\r\n\r\n") || !strings.Contains(got, "only part") {
				t.Fatalf("%s %q: got %q (closed %v), want the part that came and the connection closed", v.name, req, got, closed)
			}
		}
	}
}

// TestGateway_TrustedProxies: from a peer in TrustedProxies the client's
// X-Forwarded-For is appended to and its X-Forwarded-Proto kept; from any
// other peer both are replaced. X-Forwarded-Host and X-Real-IP are always
// the gateway's.
func TestGateway_TrustedProxies(t *testing.T) {
	t.Parallel()
	b, rec := desyncGateway(t, Limits{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32"), netip.MustParsePrefix("10.9.0.0/16")}})
	spoof := "X-Forwarded-For: 203.0.113.9, 10.9.1.1\r\nX-Forwarded-Proto: https\r\nX-Forwarded-Host: evil.example.com\r\nX-Real-IP: 6.6.6.6\r\n"
	for _, peer := range []string{"127.0.0.1", "127.0.0.2"} {
		for _, req := range []string{
			"GET /%s HTTP/1.1\r\nHost: app.example.com\r\n" + spoof + "\r\n",                          // the event loop
			"GET /%s HTTP/1.0\r\nHost: app.example.com\r\n" + spoof + "\r\n",                          // net/http
			"POST /%s HTTP/1.1\r\nHost: app.example.com\r\nContent-Length: 9000\r\n" + spoof + "\r\n", // a streamed body
		} {
			path := fmt.Sprintf("trusted-%s-%d", peer, len(rec.received()))
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(peer)}}
			conn, err := d.Dial("tcp", b.addrs.HTTP)
			if err != nil {
				t.Fatal(err)
			}
			raw := fmt.Sprintf(req, path)
			if strings.HasPrefix(raw, "POST") {
				raw += strings.Repeat("p", 9000)
			}
			resp, _ := rawExchange(t, bufio.NewReader(conn), conn, raw)
			conn.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("%s: %d", raw[:30], resp.StatusCode)
			}
			got := rec.waitRequest(t, "/"+path)
			want := recorded{xff: "127.0.0.1", realIP: "127.0.0.1", proto: "http"}
			if peer == "127.0.0.2" {
				want = recorded{xff: "203.0.113.9, 10.9.1.1, 127.0.0.2", realIP: "203.0.113.9", proto: "https"}
			}
			if got.xff != want.xff || got.realIP != want.realIP || got.proto != want.proto || got.xhost != "app.example.com" {
				t.Fatalf("from %s, %q: backend saw xff %q real-ip %q proto %q host %q, want %q %q %q app.example.com",
					peer, raw[:30], got.xff, got.realIP, got.proto, got.xhost, want.xff, want.realIP, want.proto)
			}
		}
	}
}

// TestGateway_ReportsLiveRoutes: the report to the control plane names the
// route table version the gateway serves and which of its routes it can
// serve: a redirect at once, a backend route once a task accepted a
// connection, never one whose backend refuses them.
func TestGateway_ReportsLiveRoutes(t *testing.T) {
	t.Parallel()
	b, _ := desyncGateway(t, Limits{})
	var rep CertificateReport
	waitFor(t, func() bool {
		b.cp.mu.Lock()
		defer b.cp.mu.Unlock()
		if b.cp.report == nil {
			return false
		}
		rep = *b.cp.report
		return rep.TableVersion == 1 && len(rep.Live) == 3
	})
	if want := []string{"app.example.com", "redir.example.com", "secure.example.com"}; strings.Join(rep.Live, " ") != strings.Join(want, " ") || rep.Gateway == "" {
		t.Fatalf("report: gateway %q live %q, want %q", rep.Gateway, rep.Live, want)
	}
}

// TestGateway_ClosedTaskDrainsEveryPool: once a task leaves its service,
// every idle connection to it is closed — the event loops' and the HTTP/1
// server's alike — rather than left until the idle timeout.
func TestGateway_ClosedTaskDrainsEveryPool(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	port := freePort(t)
	var open atomic.Int32
	listenBackend(t, "127.0.0.1", port, func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	})
	listenBackend(t, "127.0.0.2", port, nil)
	b.resolver.set("web", "127.0.0.1")
	b.publish(t, 1, Route{Hostname: "drain.example.com", Visibility: VisibilityPublic, Backend: &Backend{Service: "web", Port: port}})
	for _, v := range b.viasNamed("drain.example.com") {
		conn, br := v.dial(t, "drain.example.com")
		if resp, _ := rawExchange(t, br, conn, "GET / HTTP/1.1\r\nHost: drain.example.com\r\n\r\n"); resp.StatusCode != 200 {
			t.Fatalf("%s: %d", v.name, resp.StatusCode)
		}
	}
	if n := open.Load(); n < 2 {
		t.Fatalf("%d connections to the task, want one from each way of serving", n)
	}
	// The task leaves: the service resolves to another one.
	b.resolver.set("web", "127.0.0.2")
	deadline := time.Now().Add(10 * time.Second)
	for open.Load() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d idle connections to the departed task still open after 10 s", open.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// listenBackend serves a plain answer on ip:port, telling state of each
// connection.
func listenBackend(t *testing.T, ip string, port int, state func(net.Conn, http.ConnState)) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, fmt.Sprint(port)))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ConnState: state, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, ip) })}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln
}

// TestGateway_HTTP2 covers how the HTTP/2 side passes answers on: a body
// with a length, a chunked one with its trailer, a HEAD, 103 Early Hints,
// the backend's fields but the hop-by-hop ones (whatever their case), and
// a body cut short by the backend, which resets the stream rather than
// ending it as if whole.
func TestGateway_HTTP2(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/sized":
			w.Header().Set("Content-Length", "1000")
			w.Header()["x-lower"] = []string{"1"}
			w.Header().Add("Set-Cookie", "a=1")
			w.Header().Add("Set-Cookie", "b=2")
			w.Header().Set("Connection", "X-Hop")
			w.Header().Set("X-Hop", "secret")
			io.WriteString(w, strings.Repeat("s", 1000))
		case "/chunked":
			w.Header().Set("Trailer", "X-Sum")
			for _, part := range []string{"one,", "two,", "three"} {
				io.WriteString(w, part)
				w.(http.Flusher).Flush()
			}
			w.Header().Set("X-Sum", "13")
		case "/early":
			w.Header().Set("Link", "</style.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Del("Link")
			io.WriteString(w, "final")
		case "/short":
			conn, bw, _ := w.(http.Hijacker).Hijack()
			bw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly twenty bytes...")
			bw.Flush()
			conn.Close()
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	b.resolver.set("web", "127.0.0.1")
	b.publish(t, 1, Route{Hostname: "h2.example.com", Visibility: VisibilityPublic, Backend: &Backend{Service: "web", Port: ln.Addr().(*net.TCPAddr).Port}})
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true, ServerName: "h2.example.com"}, ForceAttemptHTTP2: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", b.addrs.HTTPS)
		},
	}}
	do := func(method, path string) (*http.Response, string, error) {
		t.Helper()
		var early []int
		trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, _ textproto.MIMEHeader) error { early = append(early, code); return nil }}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), method, "https://h2.example.com"+path, nil)
		resp, err := client.Do(req)
		if err != nil {
			// A stream reset before the head came.
			return nil, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if resp.ProtoMajor != 2 {
			t.Fatalf("%s over %s", path, resp.Proto)
		}
		if len(early) > 0 {
			resp.Header.Set("X-Test-Early", fmt.Sprint(early))
		}
		return resp, string(body), err
	}
	resp, body, err := do("GET", "/sized")
	if err != nil || resp == nil || len(body) != 1000 || resp.ContentLength != 1000 || resp.Header.Get("X-Lower") != "1" ||
		len(resp.Header.Values("Set-Cookie")) != 2 || resp.Header.Get("X-Hop") != "" {
		t.Fatalf("/sized: %v, %d bytes, header %v", err, len(body), resp.Header)
	}
	if resp, body, err := do("HEAD", "/sized"); err != nil || body != "" || resp.ContentLength != 1000 {
		t.Fatalf("HEAD /sized: %v %q length %d", err, body, resp.ContentLength)
	}
	if resp, body, err := do("GET", "/chunked"); err != nil || body != "one,two,three" || resp.Trailer.Get("X-Sum") != "13" {
		t.Fatalf("/chunked: %v %q trailer %v", err, body, resp.Trailer)
	}
	if resp, body, err := do("GET", "/early"); err != nil || body != "final" || resp.Header.Get("X-Test-Early") != "[103]" || resp.Header.Get("Link") != "" {
		t.Fatalf("/early: %v %q header %v", err, body, resp.Header)
	}
	if _, body, err := do("GET", "/short"); err == nil {
		t.Fatalf("/short ended cleanly with %q, want the stream reset", body)
	}
}

// TestGateway_RequestReadAcrossItsBuffer: over TLS (the HTTP/1 server), a
// pipelined request whose small body comes later, when the connection's
// buffer must make room for it (moving what it holds), is still read as
// the request it was: here a HEAD, whose answer has no body.
func TestGateway_RequestReadAcrossItsBuffer(t *testing.T) {
	t.Parallel()
	b, rec := desyncGateway(t, Limits{})
	conn, br := dialTLS(t, b.addrs.HTTPS, "app.example.com")
	pad := func(head string, size int) string {
		return head + "X-Pad: " + strings.Repeat("p", size-len(head)-len("X-Pad: \r\n\r\n")) + "\r\n\r\n"
	}
	// The first request and the second's head and body so far fill the
	// 16 KiB buffer exactly; the second's head starts within its first
	// part, which the body read after the rest moved to the front
	// overwrites.
	first := pad("GET /first HTTP/1.1\r\nHost: app.example.com\r\n", 9000)
	second := pad("HEAD /second HTTP/1.1\r\nHost: app.example.com\r\nContent-Length: 8000\r\n", 3000)
	sent := h1BufferSize - len(first) - len(second)
	io.WriteString(conn, first+second+strings.Repeat("b", sent))
	if resp, body := readResponse(t, br, http.MethodGet); resp.StatusCode != 200 || body != "GET /first 0" {
		t.Fatalf("first: %d %q", resp.StatusCode, body)
	}
	rec.waitRequest(t, "/first")
	time.Sleep(100 * time.Millisecond)
	io.WriteString(conn, strings.Repeat("b", 8000-sent))
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if resp, _ := readResponse(t, br, http.MethodHead); resp.StatusCode != 200 {
		t.Fatalf("second: %d", resp.StatusCode)
	}
	if r := rec.waitRequest(t, "/second"); r.method != http.MethodHead || r.body != 8000 {
		t.Fatalf("the backend got %s with %d bytes of body", r.method, r.body)
	}
	// Had the gateway forgotten it was a HEAD, it would wait for a body
	// to the HEAD's answer and never serve the next request.
	io.WriteString(conn, "GET /third HTTP/1.1\r\nHost: app.example.com\r\n\r\n")
	if resp, body := readResponse(t, br, http.MethodGet); resp.StatusCode != 200 || body != "GET /third 0" {
		t.Fatalf("third: %d %q", resp.StatusCode, body)
	}
}
