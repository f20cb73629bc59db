//go:build linux

package ingress

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// loopGateway is a Proxy served by event loops on two plain-HTTP
// listeners (the second answers ACME challenges), whose handed-over
// connections land in handed instead of the HTTP/1 server.
type loopGateway struct {
	srv      *loopServer
	proxy    *Proxy
	addr     string
	acmeAddr string
	handed   chan net.Conn
	stop     func()
}

// startLoops serves routes with event loops; hosts is what the resolver
// answers for each service name. Every route's backend set is resolved
// before it returns, so the loop proxies the first request itself.
func startLoops(t *testing.T, hosts map[string][]string, routes ...Route) *loopGateway {
	t.Helper()
	p := NewProxy(t.Context(), slog.New(slog.DiscardHandler), &staticResolver{hosts: hosts})
	if err := p.SetTable(Table{Version: 1, Routes: routes}); err != nil {
		t.Fatal(err)
	}
	for _, r := range routes {
		if r.Backend == nil {
			continue
		}
		u := p.ups.get(upstreamKey{service: r.Backend.Service, port: r.Backend.Port, timeouts: r.Timeouts})
		select {
		case <-u.resolved:
		case <-time.After(5 * time.Second):
			t.Fatalf("backend %s never resolved", r.Backend.Service)
		}
	}
	g := &loopGateway{proxy: p, handed: make(chan net.Conn, 16)}
	s := newLoopServer(p, slog.New(slog.DiscardHandler), &server{})
	s.handOff = func(c net.Conn, _ Listener, read []byte) { g.handed <- &prefixedConn{Conn: c, prefix: read} }
	for _, acme := range []bool{false, true} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.add(ln, ListenerHTTP, acme); err != nil {
			t.Fatal(err)
		}
		// The loops hold a duplicate: once they stop, connections are
		// refused.
		ln.Close()
		if acme {
			g.acmeAddr = ln.Addr().String()
		} else {
			g.addr = ln.Addr().String()
		}
	}
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	g.srv = s
	var once sync.Once
	g.stop = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			s.shutdown(ctx)
		})
	}
	t.Cleanup(g.stop)
	return g
}

// prefixedConn is a handed-over connection: its reads begin with what the
// loop had read of it.
type prefixedConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixedConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// expectHandover reads the next handed-over connection and checks that it
// begins with want.
func (g *loopGateway) expectHandover(t *testing.T, want string) {
	t.Helper()
	select {
	case c := <-g.handed:
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		got := make([]byte, len(want))
		n, err := io.ReadFull(c, got)
		if err != nil || string(got) != want {
			t.Fatalf("handed-over connection begins with %q (%v), want %q", got[:n], err, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the loop did not hand over %q", want)
	}
}

// expectNoHandover fails if the loop handed a connection over.
func (g *loopGateway) expectNoHandover(t *testing.T) {
	t.Helper()
	select {
	case c := <-g.handed:
		c.SetReadDeadline(time.Now().Add(time.Second))
		b := make([]byte, 200)
		n, _ := c.Read(b)
		c.Close()
		t.Fatalf("the loop handed over a connection beginning with %q", b[:n])
	case <-time.After(20 * time.Millisecond):
	}
}

func backendRoute(host string, port int, timeouts Timeouts) Route {
	return Route{Hostname: host, Visibility: VisibilityPublic, Backend: &Backend{Service: host, Port: port}, Timeouts: timeouts}
}

// loopBackend serves the paths the loop tests ask for with net/http;
// requests tells of every request received (path and query).
func loopBackend(t *testing.T, ln net.Listener, idle time.Duration, requests chan<- string) {
	t.Helper()
	big := make([]byte, 4<<20)
	for i := range big {
		big[i] = byte(i * 7 / 3)
	}
	srv := &http.Server{IdleTimeout: idle, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests != nil {
			requests <- r.URL.RequestURI()
		}
		switch r.URL.Path {
		case "/echo":
			body, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.RawQuery, body)
		case "/headers":
			fmt.Fprintf(w, "host=%s xff=%q xhost=%q proto=%q forwarded=%q keepalive=%q te=%q proxyauth=%q trailer=%q",
				r.Host, r.Header.Values("X-Forwarded-For"), r.Header.Values("X-Forwarded-Host"), r.Header.Values("X-Forwarded-Proto"),
				r.Header.Values("Forwarded"), r.Header.Values("Keep-Alive"), r.Header.Values("Te"),
				r.Header.Values("Proxy-Authorization"), r.Header.Values("Trailer"))
		case "/sized":
			w.Header().Set("Content-Length", "1000")
			w.Write(bytes.Repeat([]byte("s"), 1000))
		case "/status":
			code, _ := strconv.Atoi(r.URL.RawQuery)
			w.WriteHeader(code)
		case "/chunked":
			w.Header().Set("Trailer", "X-Sum")
			for _, part := range []string{"one,", "two,", "three"} {
				io.WriteString(w, part)
				w.(http.Flusher).Flush()
			}
			w.Header().Set("X-Sum", "13")
		case "/big":
			w.Header().Set("Content-Length", strconv.Itoa(len(big)))
			w.Write(big)
		case "/early":
			w.Header().Set("Link", "</style.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Del("Link")
			io.WriteString(w, "final")
		case "/slow":
			time.Sleep(300 * time.Millisecond)
			io.WriteString(w, "slow done")
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

func listenLoopback(t *testing.T, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

func portOf(ln net.Listener) int { return ln.Addr().(*net.TCPAddr).Port }

// scriptedBackend answers every request it reads with respond, which writes
// whatever bytes it likes and says whether to read another request.
func scriptedBackend(t *testing.T, respond func(c net.Conn, r *http.Request) (keep bool)) int {
	t.Helper()
	ln := listenLoopback(t, "127.0.0.1:0")
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				stop := context.AfterFunc(t.Context(), func() { c.Close() })
				defer stop()
				br := bufio.NewReader(c)
				for {
					r, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, r.Body)
					if !respond(c, r) {
						return
					}
				}
			}()
		}
	}()
	return portOf(ln)
}

// rawResponses answers each path with a fixed response; the backend
// closes the connection after the ones marked with a trailing "|close".
func rawResponses(t *testing.T, responses map[string]string) int {
	return scriptedBackend(t, func(c net.Conn, r *http.Request) bool {
		resp, ok := responses[r.URL.Path]
		if !ok {
			io.WriteString(c, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
			return true
		}
		resp, closing := strings.CutSuffix(resp, "|close")
		io.WriteString(c, resp)
		return !closing
	})
}

// expectClosed checks that the gateway closed conn (after what was read).
func expectClosed(t *testing.T, conn net.Conn, br *bufio.Reader) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	if b, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("connection still open: read %q, %v", b, err)
	}
}

// pipelineEcho writes n pipelined requests for /echo on one connection
// and checks the answers.
func pipelineEcho(addr, host string, client, n int) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(15 * time.Second))
	var reqs strings.Builder
	for i := range n {
		fmt.Fprintf(&reqs, "GET /echo?%d-%d HTTP/1.1\r\n%s\r\n", client, i, host)
	}
	if _, err := io.WriteString(c, reqs.String()); err != nil {
		return err
	}
	br := bufio.NewReader(c)
	for i := range n {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return fmt.Errorf("client %d, response %d: %w", client, i, err)
		}
		body, err := io.ReadAll(resp.Body)
		if want := fmt.Sprintf("GET %d-%d ", client, i); err != nil || string(body) != want {
			return fmt.Errorf("client %d, response %d: %q (%v), want %q", client, i, body, err, want)
		}
	}
	return nil
}

func TestLoop_ProxiesItself(t *testing.T) {
	t.Parallel()
	ln := listenLoopback(t, "127.0.0.1:0")
	loopBackend(t, ln, 0, nil)
	raw := rawResponses(t, map[string]string{
		"/close-delimited": "HTTP/1.1 200 OK\r\n\r\nbody|close",
		"/http10":          "HTTP/1.0 200 OK\r\nContent-Length: 4\r\n\r\nold!|close",
		"/hop": "HTTP/1.1 200 OK\r\nKeep-Alive: timeout=9\r\nTE: trailers\r\nProxy-Authenticate: Basic\r\n" +
			"Proxy-Connection: keep-alive\r\nTrailer: X-T\r\nContent-Length: 3\r\n\r\nhop",
		"/named": "HTTP/1.1 200 OK\r\nConnection: X-Private, Content-Length\r\nX-Private: secret\r\nX-Public: shown\r\n" +
			"Content-Length: 5\r\n\r\nnamed",
	})
	g := startLoops(t, map[string][]string{"app.example.com": {"127.0.0.1"}, "raw.example.com": {"127.0.0.1"}},
		backendRoute("app.example.com", portOf(ln), Timeouts{}), backendRoute("raw.example.com", raw, Timeouts{}))
	const host = "Host: app.example.com\r\n"

	t.Run("get post head", func(t *testing.T) {
		conn, br := dialGateway(t, g.addr)
		if resp, body := rawExchange(t, br, conn, "GET /echo?q=1 HTTP/1.1\r\n"+host+"\r\n"); resp.StatusCode != 200 || body != "GET q=1 " {
			t.Fatalf("GET: %d %q", resp.StatusCode, body)
		}
		if resp, body := rawExchange(t, br, conn, "POST /echo HTTP/1.1\r\n"+host+"Content-Length: 5\r\n\r\nhello"); resp.StatusCode != 200 || body != "POST  hello" {
			t.Fatalf("POST: %d %q", resp.StatusCode, body)
		}
		io.WriteString(conn, "HEAD /sized HTTP/1.1\r\n"+host+"\r\n")
		if resp, body := readResponse(t, br, http.MethodHead); resp.StatusCode != 200 || resp.ContentLength != 1000 || body != "" {
			t.Fatalf("HEAD: %d length %d %q", resp.StatusCode, resp.ContentLength, body)
		}
		// Had the loop waited for a body after HEAD, this would hang.
		if resp, body := rawExchange(t, br, conn, "GET /sized HTTP/1.1\r\n"+host+"\r\n"); resp.StatusCode != 200 || len(body) != 1000 {
			t.Fatalf("GET after HEAD: %d %d bytes", resp.StatusCode, len(body))
		}
		g.expectNoHandover(t)
	})

	t.Run("204 and 304", func(t *testing.T) {
		conn, br := dialGateway(t, g.addr)
		for _, code := range []int{204, 304, 204} {
			if resp, body := rawExchange(t, br, conn, fmt.Sprintf("GET /status?%d HTTP/1.1\r\n%s\r\n", code, host)); resp.StatusCode != code || body != "" {
				t.Fatalf("%d: got %d %q", code, resp.StatusCode, body)
			}
		}
		if resp, body := rawExchange(t, br, conn, "GET /echo HTTP/1.1\r\n"+host+"\r\n"); resp.StatusCode != 200 || body != "GET  " {
			t.Fatalf("GET after 204/304: %d %q", resp.StatusCode, body)
		}
		g.expectNoHandover(t)
	})

	t.Run("chunked with trailers", func(t *testing.T) {
		conn, br := dialGateway(t, g.addr)
		resp, body := rawExchange(t, br, conn, "GET /chunked HTTP/1.1\r\n"+host+"\r\n")
		if resp.StatusCode != 200 || body != "one,two,three" || len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
			t.Fatalf("chunked: %d %q %v", resp.StatusCode, body, resp.TransferEncoding)
		}
		if got := resp.Trailer.Get("X-Sum"); got != "13" {
			t.Fatalf("trailer X-Sum %q, want 13", got)
		}
		if v := resp.Header.Values("Trailer"); len(v) != 0 {
			t.Fatalf("hop-by-hop Trailer field passed: %q", v)
		}
		if resp, body := rawExchange(t, br, conn, "GET /echo HTTP/1.1\r\n"+host+"\r\n"); resp.StatusCode != 200 || body != "GET  " {
			t.Fatalf("GET after chunked: %d %q", resp.StatusCode, body)
		}
		g.expectNoHandover(t)
	})

	t.Run("close-delimited response", func(t *testing.T) {
		conn, br := dialGateway(t, g.addr)
		resp, body := rawExchange(t, br, conn, "GET /close-delimited HTTP/1.1\r\nHost: raw.example.com\r\n\r\n")
		if resp.StatusCode != 200 || body != "body" || !resp.Close {
			t.Fatalf("close-delimited: %d %q close=%v %v", resp.StatusCode, body, resp.Close, resp.Header)
		}
		expectClosed(t, conn, br)
		g.expectNoHandover(t)
	})

	t.Run("HTTP/1.0 backend", func(t *testing.T) {
		conn, br := dialGateway(t, g.addr)
		for range 2 {
			resp, body := rawExchange(t, br, conn, "GET /http10 HTTP/1.1\r\nHost: raw.example.com\r\n\r\n")
			if resp.StatusCode != 200 || body != "old!" || resp.ProtoMinor != 1 || resp.Close {
				t.Fatalf("HTTP/1.0 backend: %d %q %s close=%v", resp.StatusCode, body, resp.Proto, resp.Close)
			}
		}
		g.expectNoHandover(t)
	})

	t.Run("pipelined", func(t *testing.T) {
		conn, br := dialGateway(t, g.addr)
		var reqs strings.Builder
		for i := range 4 {
			fmt.Fprintf(&reqs, "GET /echo?n=%d HTTP/1.1\r\n%s\r\n", i, host)
		}
		reqs.WriteString("POST /echo?n=4 HTTP/1.1\r\n" + host + "Content-Length: 4\r\n\r\nlast")
		io.WriteString(conn, reqs.String())
		for i := range 5 {
			want := fmt.Sprintf("GET n=%d ", i)
			if i == 4 {
				want = "POST n=4 last"
			}
			if resp, body := readResponse(t, br, http.MethodGet); resp.StatusCode != 200 || body != want {
				t.Fatalf("pipelined response %d: %d %q, want %q", i, resp.StatusCode, body, want)
			}
		}
		g.expectNoHandover(t)
	})

	t.Run("4 MiB to a slow reader", func(t *testing.T) {
		// A small receive buffer, so that most of the response waits in
		// the gateway, which must stop reading the backend and resume.
		d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
			return rc.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, 4<<10) })
		}}
		conn, err := d.Dial("tcp", g.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		br := bufio.NewReader(conn)
		conn.SetDeadline(time.Now().Add(60 * time.Second))
		io.WriteString(conn, "GET /big HTTP/1.1\r\n"+host+"\r\n")
		// Let the backend run into the limit of what waits for the client.
		time.Sleep(200 * time.Millisecond)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			got.Write(buf[:n])
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("after %d bytes: %v", got.Len(), err)
			}
			if got.Len()%(512<<10) < n {
				time.Sleep(20 * time.Millisecond)
			}
		}
		want := make([]byte, 4<<20)
		for i := range want {
			want[i] = byte(i * 7 / 3)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("4 MiB body differs (got %d bytes)", got.Len())
		}
		if resp, body := rawExchange(t, br, conn, "GET /echo HTTP/1.1\r\n"+host+"\r\n"); resp.StatusCode != 200 || body != "GET  " {
			t.Fatalf("GET after the big one: %d %q", resp.StatusCode, body)
		}
		g.expectNoHandover(t)
	})

	t.Run("103 early hints", func(t *testing.T) {
		conn, br := dialGateway(t, g.addr)
		io.WriteString(conn, "GET /early HTTP/1.1\r\n"+host+"\r\n")
		early, err := http.ReadResponse(br, nil)
		if err != nil || early.StatusCode != http.StatusEarlyHints || early.Header.Get("Link") != "</style.css>; rel=preload" {
			t.Fatalf("interim response: %v %v", early, err)
		}
		if resp, body := readResponse(t, br, http.MethodGet); resp.StatusCode != 200 || body != "final" || resp.Header.Get("Link") != "" {
			t.Fatalf("final response: %d %q %v", resp.StatusCode, body, resp.Header)
		}
		g.expectNoHandover(t)
	})

	t.Run("hop-by-hop and forwarding fields", func(t *testing.T) {
		conn, br := dialGateway(t, g.addr)
		_, body := rawExchange(t, br, conn, "GET /headers HTTP/1.1\r\n"+host+"Keep-Alive: timeout=5\r\nTE: trailers\r\n"+
			"Proxy-Authorization: Basic c2VjcmV0\r\nTrailer: X-Foo\r\nX-Forwarded-For: 6.6.6.6\r\nX-Forwarded-Host: evil.example\r\n"+
			"X-Forwarded-Proto: https\r\nForwarded: for=6.6.6.6\r\n\r\n")
		want := `host=app.example.com xff=["127.0.0.1"] xhost=["app.example.com"] proto=["http"] forwarded=[] keepalive=[] te=[] proxyauth=[] trailer=[]`
		if body != want {
			t.Fatalf("backend saw\n%s\nwant\n%s", body, want)
		}
		resp, body := rawExchange(t, br, conn, "GET /hop HTTP/1.1\r\nHost: raw.example.com\r\n\r\n")
		for _, name := range []string{"Keep-Alive", "Te", "Proxy-Authenticate", "Proxy-Connection", "Trailer"} {
			if v := resp.Header.Values(name); len(v) > 0 {
				t.Errorf("response field %s passed: %q", name, v)
			}
		}
		if body != "hop" {
			t.Fatalf("body %q", body)
		}
		resp, body = rawExchange(t, br, conn, "GET /named HTTP/1.1\r\nHost: raw.example.com\r\n\r\n")
		if body != "named" || resp.ContentLength != 5 || resp.Header.Get("X-Private") != "" || resp.Header.Get("X-Public") != "shown" || len(resp.Header.Values("Connection")) > 0 {
			t.Fatalf("Connection-named fields: %q length %d %v", body, resp.ContentLength, resp.Header)
		}
		g.expectNoHandover(t)
	})

	t.Run("request in pieces", func(t *testing.T) {
		conn, br := dialGateway(t, g.addr)
		body := strings.Repeat("z", maxBufferedRequestBody)
		if resp, got := rawExchange(t, br, conn, "POST /echo HTTP/1.1\r\n"+host+"Content-Length: 8192\r\n\r\n"+body); resp.StatusCode != 200 || got != "POST  "+body {
			t.Fatalf("8 KiB body: %d %d bytes", resp.StatusCode, len(got))
		}
		io.WriteString(conn, "POST /echo?p HTTP/1.1\r\nHo")
		time.Sleep(50 * time.Millisecond)
		io.WriteString(conn, "st: app.example.com\r\nContent-Length: 5\r\n\r\nhe")
		time.Sleep(50 * time.Millisecond)
		if resp, got := rawExchange(t, br, conn, "llo"); resp.StatusCode != 200 || got != "POST p hello" {
			t.Fatalf("request in pieces: %d %q", resp.StatusCode, got)
		}
		g.expectNoHandover(t)
	})

	t.Run("many clients at once", func(t *testing.T) {
		// 50 requests of 1 KiB each: more than a client may send ahead.
		padded := host + "X-Pad: " + strings.Repeat("p", 1<<10) + "\r\n"
		errs := make(chan error, 20)
		for i := range cap(errs) {
			go func() { errs <- pipelineEcho(g.addr, padded, i, 50) }()
		}
		for range cap(errs) {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		g.expectNoHandover(t)
	})

	t.Run("client half-closes after its request", func(t *testing.T) {
		conn, br := dialGateway(t, g.addr)
		io.WriteString(conn, "GET /echo?half HTTP/1.1\r\n"+host+"\r\n")
		conn.(*net.TCPConn).CloseWrite()
		if resp, body := readResponse(t, br, http.MethodGet); resp.StatusCode != 200 || body != "GET half " {
			t.Fatalf("after a half-close: %d %q", resp.StatusCode, body)
		}
		expectClosed(t, conn, br)
		g.expectNoHandover(t)
	})

	t.Run("client asks to close", func(t *testing.T) {
		conn, br := dialGateway(t, g.addr)
		resp, body := rawExchange(t, br, conn, "GET /echo HTTP/1.1\r\n"+host+"Connection: close\r\n\r\n")
		if resp.StatusCode != 200 || body != "GET  " || !resp.Close {
			t.Fatalf("Connection: close: %d %q close=%v", resp.StatusCode, body, resp.Close)
		}
		expectClosed(t, conn, br)
		g.expectNoHandover(t)
	})
}

func TestLoop_HandsOver(t *testing.T) {
	t.Parallel()
	ln := listenLoopback(t, "127.0.0.1:0")
	loopBackend(t, ln, 0, nil)
	g := startLoops(t, map[string][]string{"app.example.com": {"127.0.0.1"}},
		backendRoute("app.example.com", portOf(ln), Timeouts{}))
	const host = "Host: app.example.com\r\n"
	const first = "GET /echo?first HTTP/1.1\r\n" + host + "\r\n"
	big := strings.Repeat("b", 9<<10)
	cases := []struct{ name, req string }{
		{"HTTP/1.0", "GET /echo HTTP/1.0\r\n" + host + "\r\n"},
		{"chunked body", "POST /echo HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"},
		{"expect", "POST /echo HTTP/1.1\r\n" + host + "Content-Length: 5\r\nExpect: 100-continue\r\n\r\n"},
		{"upgrade", "GET /ws HTTP/1.1\r\n" + host + "Connection: Upgrade\r\nUpgrade: websocket\r\n\r\n"},
		{"9 KiB body", "POST /echo HTTP/1.1\r\n" + host + "Content-Length: 9216\r\n\r\n" + big},
		{"absolute form", "GET http://app.example.com/echo HTTP/1.1\r\n" + host + "\r\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn, _ := dialGateway(t, g.addr)
			io.WriteString(conn, c.req)
			g.expectHandover(t, c.req)
		})
		t.Run(c.name+" after a proxied request", func(t *testing.T) {
			conn, br := dialGateway(t, g.addr)
			if resp, body := rawExchange(t, br, conn, first); resp.StatusCode != 200 || body != "GET first " {
				t.Fatalf("first request: %d %q", resp.StatusCode, body)
			}
			io.WriteString(conn, c.req)
			g.expectHandover(t, c.req)
		})
		t.Run(c.name+" pipelined after a proxied request", func(t *testing.T) {
			conn, br := dialGateway(t, g.addr)
			io.WriteString(conn, first+c.req)
			if resp, body := readResponse(t, br, http.MethodGet); resp.StatusCode != 200 || body != "GET first " {
				t.Fatalf("first request: %d %q", resp.StatusCode, body)
			}
			g.expectHandover(t, c.req)
		})
	}

	t.Run("refused heads", func(t *testing.T) {
		// What the strict parser refuses is answered by the loop and the
		// connection closed: never read by a more lenient parser.
		for _, c := range []struct {
			name, req string
			status    int
		}{
			{"length and chunked", "POST /echo HTTP/1.1\r\n" + host + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
			{"two lengths", "POST /echo HTTP/1.1\r\n" + host + "Content-Length: 2\r\nContent-Length: 2\r\n\r\nhi", 400},
			{"bare LF", "GET /echo HTTP/1.1\nHost: app.example.com\n\n", 400},
			{"obs-fold", "GET /echo HTTP/1.1\r\n" + host + "X-Folded: a\r\n b\r\n\r\n", 400},
			{"unknown coding", "POST /echo HTTP/1.1\r\n" + host + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501},
			{"HTTP/2.0", "GET /echo HTTP/2.0\r\n" + host + "\r\n", 505},
			{"userinfo host", "GET /echo HTTP/1.1\r\nHost: evil.example@app.example.com\r\n\r\n", 400},
			{"head too large", "GET /echo HTTP/1.1\r\n" + host + "X-Long: " + strings.Repeat("l", 17<<10) + "\r\n\r\n", 431},
		} {
			for _, before := range []string{"", first} {
				conn, br := dialGateway(t, g.addr)
				io.WriteString(conn, before+c.req)
				if before != "" {
					readResponse(t, br, http.MethodGet)
				}
				if resp, _ := readResponse(t, br, http.MethodPost); resp.StatusCode != c.status || !resp.Close {
					t.Fatalf("%s: %d close=%v, want %d and close", c.name, resp.StatusCode, resp.Close, c.status)
				}
				expectClosed(t, conn, br)
			}
		}
		g.expectNoHandover(t)
	})

	t.Run("served by the loop", func(t *testing.T) {
		conn, br := dialGateway(t, g.addr)
		// A Connection option: the field it names stays behind.
		resp, body := rawExchange(t, br, conn, "GET /headers HTTP/1.1\r\n"+host+"Connection: foo\r\nFoo: 1\r\nKeep-Alive: 3\r\n\r\n")
		if resp.StatusCode != 200 || !strings.Contains(body, `keepalive=[]`) {
			t.Fatalf("Connection option: %d %q", resp.StatusCode, body)
		}
		// An unknown host: the loop's 404, its small body read and dropped.
		resp, body = rawExchange(t, br, conn, "POST /echo HTTP/1.1\r\nHost: nowhere.example.com\r\nContent-Length: 3\r\n\r\nGET")
		if resp.StatusCode != 404 || body != notFoundReply().text {
			t.Fatalf("unknown host: %d %q", resp.StatusCode, body)
		}
		// The connection goes on.
		if resp, body := rawExchange(t, br, conn, first); resp.StatusCode != 200 || body != "GET first " {
			t.Fatalf("after the 404: %d %q", resp.StatusCode, body)
		}
		g.expectNoHandover(t)
	})

	t.Run("ACME challenge", func(t *testing.T) {
		req := "GET " + acmeChallengePrefix + "token HTTP/1.1\r\n" + host + "\r\n"
		conn, _ := dialGateway(t, g.acmeAddr)
		io.WriteString(conn, req)
		g.expectHandover(t, req)
		// Where ACME is not answered, the path is the application's.
		conn, br := dialGateway(t, g.addr)
		if resp, body := rawExchange(t, br, conn, req); resp.StatusCode != 200 || body != "" {
			t.Fatalf("challenge path on the listener without ACME: %d %q, want the backend's empty 200", resp.StatusCode, body)
		}
		g.expectNoHandover(t)
	})
}

func TestLoop_Failures(t *testing.T) {
	t.Parallel()
	// One task is up on 127.0.0.1, the other (127.0.0.2, same port)
	// refuses connections.
	live := listenLoopback(t, "127.0.0.1:0")
	port := portOf(live)
	loopBackend(t, live, 0, nil)
	idle := listenLoopback(t, "127.0.0.1:0")
	loopBackend(t, idle, 50*time.Millisecond, nil)
	refused := listenLoopback(t, "127.0.0.1:0")
	refused.Close()
	never := scriptedBackend(t, func(c net.Conn, r *http.Request) bool {
		<-t.Context().Done()
		return false
	})
	broken := rawResponses(t, map[string]string{
		"/malformed": "HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n",
		"/garbage":   "HTTP/1.1 200 OK\r\nBad Field\r\nContent-Length: 2\r\n\r\nok",
		"/half":      "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhalf|close",
		"/101":       "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n",
		"/oneshot":   "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok|close",
	})
	g := startLoops(t, map[string][]string{
		"two.example.com":     {"127.0.0.1", "127.0.0.2"},
		"refused.example.com": {"127.0.0.1"},
		"never.example.com":   {"127.0.0.1"},
		"idle.example.com":    {"127.0.0.1"},
		"broken.example.com":  {"127.0.0.1"},
		"app.example.com":     {"127.0.0.1"},
	},
		backendRoute("two.example.com", port, Timeouts{}),
		backendRoute("refused.example.com", portOf(refused), Timeouts{}),
		backendRoute("gone.example.com", port, Timeouts{}), // resolves to nothing
		backendRoute("never.example.com", never, Timeouts{ResponseHeaderMS: 300}),
		backendRoute("idle.example.com", portOf(idle), Timeouts{}),
		backendRoute("broken.example.com", broken, Timeouts{}),
		backendRoute("app.example.com", port, Timeouts{}),
	)

	t.Run("one task refuses", func(t *testing.T) {
		conn, br := dialGateway(t, g.addr)
		for i := range 6 {
			method, want := "GET", "GET  "
			req := "GET /echo HTTP/1.1\r\nHost: two.example.com\r\n\r\n"
			if i%2 == 1 {
				method, want = "POST", "POST  x"
				req = "POST /echo HTTP/1.1\r\nHost: two.example.com\r\nContent-Length: 1\r\n\r\nx"
			}
			if resp, body := rawExchange(t, br, conn, req); resp.StatusCode != 200 || body != want {
				t.Fatalf("%s %d with a task down: %d %q", method, i, resp.StatusCode, body)
			}
		}
		u := g.proxy.ups.get(upstreamKey{service: "two.example.com", port: port})
		for _, e := range *u.endpoints.Load() {
			down := e.downUntil.Load() > time.Now().UnixNano()
			if down != (e.addrPort.Addr() == netip.MustParseAddr("127.0.0.2")) {
				t.Errorf("%s marked down: %v", e.addr, down)
			}
		}
		g.expectNoHandover(t)
	})

	t.Run("no backend", func(t *testing.T) {
		for _, host := range []string{"refused.example.com", "gone.example.com"} {
			conn, br := dialGateway(t, g.addr)
			resp, body := rawExchange(t, br, conn, "GET / HTTP/1.1\r\nHost: "+host+"\r\n\r\n")
			if resp.StatusCode != 502 || body != failureReply(errNoBackend).text {
				t.Fatalf("%s: %d %q, want 502 %q", host, resp.StatusCode, body, failureReply(errNoBackend).text)
			}
			// The connection goes on.
			if resp, _ := rawExchange(t, br, conn, "GET /echo HTTP/1.1\r\nHost: two.example.com\r\n\r\n"); resp.StatusCode != 200 {
				t.Fatalf("after a 502: %d", resp.StatusCode)
			}
		}
		g.expectNoHandover(t)
	})

	t.Run("response header timeout", func(t *testing.T) {
		conn, br := dialGateway(t, g.addr)
		start := time.Now()
		resp, body := rawExchange(t, br, conn, "GET / HTTP/1.1\r\nHost: never.example.com\r\n\r\n")
		if resp.StatusCode != 504 || body != failureReply(errResponseHeaderTimeout).text {
			t.Fatalf("backend that never answers: %d %q", resp.StatusCode, body)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("504 after %v with a 300ms response header timeout", d)
		}
		g.expectNoHandover(t)
	})

	t.Run("pooled connection closed by the backend", func(t *testing.T) {
		conn, br := dialGateway(t, g.addr)
		for i := range 3 {
			if resp, body := rawExchange(t, br, conn, "GET /echo HTTP/1.1\r\nHost: idle.example.com\r\n\r\n"); resp.StatusCode != 200 || body != "GET  " {
				t.Fatalf("GET %d: %d %q", i, resp.StatusCode, body)
			}
			time.Sleep(200 * time.Millisecond) // the backend drops the idle connection
			if resp, body := rawExchange(t, br, conn, "POST /echo HTTP/1.1\r\nHost: idle.example.com\r\nContent-Length: 2\r\n\r\nhi"); resp.StatusCode != 200 || body != "POST  hi" {
				t.Fatalf("POST %d after the backend closed the pooled connection: %d %q", i, resp.StatusCode, body)
			}
			time.Sleep(200 * time.Millisecond)
		}
		g.expectNoHandover(t)
	})

	t.Run("malformed response head", func(t *testing.T) {
		for _, path := range []string{"/malformed", "/garbage", "/101"} {
			conn, br := dialGateway(t, g.addr)
			if resp, body := rawExchange(t, br, conn, "GET "+path+" HTTP/1.1\r\nHost: broken.example.com\r\n\r\n"); resp.StatusCode != 502 || body != failureReply(errNoBackend).text {
				t.Fatalf("%s: %d %q", path, resp.StatusCode, body)
			}
		}
		g.expectNoHandover(t)
	})

	t.Run("backend closes after every response", func(t *testing.T) {
		// Without Connection: close, the pooled connection is found closed
		// by the next request: it goes again on a fresh one.
		conn, br := dialGateway(t, g.addr)
		io.WriteString(conn, strings.Repeat("POST /oneshot HTTP/1.1\r\nHost: broken.example.com\r\nContent-Length: 1\r\n\r\nx", 20))
		for i := range 20 {
			if resp, body := readResponse(t, br, http.MethodPost); resp.StatusCode != 200 || body != "ok" {
				t.Fatalf("POST %d: %d %q", i, resp.StatusCode, body)
			}
		}
		g.expectNoHandover(t)
	})

	t.Run("client leaves", func(t *testing.T) {
		// Mid-response: the gateway's writes fail.
		for range 5 {
			conn, br := dialGateway(t, g.addr)
			io.WriteString(conn, "GET /big HTTP/1.1\r\nHost: app.example.com\r\n\r\n")
			br.Peek(100)
			conn.(*net.TCPConn).SetLinger(0) // a reset, not a FIN
			conn.Close()
		}
		// Before its 504: writing it fails.
		conn, _ := dialGateway(t, g.addr)
		io.WriteString(conn, "GET / HTTP/1.1\r\nHost: never.example.com\r\n\r\n")
		time.Sleep(50 * time.Millisecond)
		conn.(*net.TCPConn).SetLinger(0)
		conn.Close()
		time.Sleep(500 * time.Millisecond)
		conn, br := dialGateway(t, g.addr)
		if resp, body := rawExchange(t, br, conn, "GET /big HTTP/1.1\r\nHost: app.example.com\r\n\r\n"); resp.StatusCode != 200 || len(body) != 4<<20 {
			t.Fatalf("after clients left: %d %d bytes", resp.StatusCode, len(body))
		}
		g.expectNoHandover(t)
	})

	t.Run("backend dies mid-body", func(t *testing.T) {
		conn, br := dialGateway(t, g.addr)
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(conn, "GET /half HTTP/1.1\r\nHost: broken.example.com\r\n\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		if string(body) != "half" || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("cut body: %q %v, want \"half\" and an unexpected EOF", body, err)
		}
		g.expectNoHandover(t)
	})
}

func TestLoop_Shutdown(t *testing.T) {
	t.Parallel()
	ln := listenLoopback(t, "127.0.0.1:0")
	requests := make(chan string, 4)
	loopBackend(t, ln, 0, requests)
	g := startLoops(t, map[string][]string{"app.example.com": {"127.0.0.1"}},
		backendRoute("app.example.com", portOf(ln), Timeouts{}))
	conn, br := dialGateway(t, g.addr)
	idleConn, idleBr := dialGateway(t, g.addr)
	if resp, _ := rawExchange(t, idleBr, idleConn, "GET /echo HTTP/1.1\r\nHost: app.example.com\r\n\r\n"); resp.StatusCode != 200 {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
	<-requests
	io.WriteString(conn, "GET /slow HTTP/1.1\r\nHost: app.example.com\r\n\r\n")
	<-requests // in flight
	stopped := make(chan struct{})
	go func() { g.stop(); close(stopped) }()
	if resp, body := readResponse(t, br, http.MethodGet); resp.StatusCode != 200 || body != "slow done" {
		t.Fatalf("request in flight during shutdown: %d %q", resp.StatusCode, body)
	}
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("shutdown did not return")
	}
	expectClosed(t, conn, br)
	expectClosed(t, idleConn, idleBr)
	if c, err := net.DialTimeout("tcp", g.addr, time.Second); err == nil {
		c.Close()
		t.Fatal("a new connection was accepted after shutdown")
	}
}

// gatedResolver answers only once release is closed.
type gatedResolver struct {
	Resolver
	release chan struct{}
}

func (r gatedResolver) LookupHost(ctx context.Context, host string) ([]string, error) {
	select {
	case <-r.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return r.Resolver.LookupHost(ctx, host)
}

// TestLoop_WaitsForFirstResolution: the first request to a backend set
// nobody asked for yet waits for its resolution off the loop, and the
// loop proxies it (no handover), while other connections go on.
func TestLoop_WaitsForFirstResolution(t *testing.T) {
	t.Parallel()
	ln := listenLoopback(t, "127.0.0.1:0")
	loopBackend(t, ln, 0, nil)
	early := backendRoute("early.example.com", portOf(ln), Timeouts{})
	g := startLoops(t, map[string][]string{"early.example.com": {"127.0.0.1"}, "late.example.com": {"127.0.0.1"}}, early)
	release := make(chan struct{})
	// Set before any request to the late route creates its upstream.
	g.proxy.ups.resolver = gatedResolver{Resolver: g.proxy.ups.resolver, release: release}
	if err := g.proxy.SetTable(Table{Version: 2, Routes: []Route{early, backendRoute("late.example.com", portOf(ln), Timeouts{})}}); err != nil {
		t.Fatal(err)
	}

	late, lateBr := dialGateway(t, g.addr)
	io.WriteString(late, "GET /echo?q=late HTTP/1.1\r\nHost: late.example.com\r\n\r\n")
	// The loop serves others while the late request waits.
	other, otherBr := dialGateway(t, g.addr)
	if resp, body := rawExchange(t, otherBr, other, "GET /echo?q=early HTTP/1.1\r\nHost: early.example.com\r\n\r\n"); resp.StatusCode != 200 || body != "GET q=early " {
		t.Fatalf("early route while the late one resolves: %d %q", resp.StatusCode, body)
	}
	late.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := lateBr.Peek(1); err == nil {
		t.Fatal("the late request was answered before its backend set was resolved")
	}
	late.SetReadDeadline(time.Now().Add(10 * time.Second))
	close(release)
	if resp, body := readResponse(t, lateBr, http.MethodGet); resp.StatusCode != 200 || body != "GET q=late " {
		t.Fatalf("late route: %d %q", resp.StatusCode, body)
	}
	g.expectNoHandover(t)
}

// TestLoop_PanicCostsOnlyItsLoop: a defect that panics while a request is
// handled closes that loop's connections and is logged; the gateway keeps
// serving, on that loop too.
func TestLoop_PanicCostsOnlyItsLoop(t *testing.T) {
	t.Parallel()
	ln := listenLoopback(t, "127.0.0.1:0")
	loopBackend(t, ln, 0, nil)
	g := startLoops(t, map[string][]string{"app.example.com": {"127.0.0.1"}, "bug.example.com": {"127.0.0.1"}},
		backendRoute("app.example.com", portOf(ln), Timeouts{}), backendRoute("bug.example.com", portOf(ln), Timeouts{}))
	hook := func(host string) {
		if host == "bug.example.com" {
			panic("a defect")
		}
	}
	g.srv.beforeBegin.Store(&hook)

	conn, br := dialGateway(t, g.addr)
	io.WriteString(conn, "GET /echo HTTP/1.1\r\nHost: bug.example.com\r\n\r\n")
	expectClosed(t, conn, br)
	// Every loop goes on: more connections than loops, each answered.
	for i := range 8 {
		conn, br := dialGateway(t, g.addr)
		if resp, body := rawExchange(t, br, conn, fmt.Sprintf("GET /echo?q=%d HTTP/1.1\r\nHost: app.example.com\r\n\r\n", i)); resp.StatusCode != 200 || body != fmt.Sprintf("GET q=%d ", i) {
			t.Fatalf("after the panic: %d %q", resp.StatusCode, body)
		}
	}
	g.expectNoHandover(t)
}

// TestLoop_SignalsInterruptTheWait: a signal delivered to a loop's thread
// ends its epoll_wait with EINTR, which must not cost anything. Each loop
// thread is sent SIGURG (which the Go runtime takes for its own and
// otherwise ignores) while requests go on.
func TestLoop_SignalsInterruptTheWait(t *testing.T) {
	t.Parallel()
	ln := listenLoopback(t, "127.0.0.1:0")
	loopBackend(t, ln, 0, nil)
	g := startLoops(t, map[string][]string{"app.example.com": {"127.0.0.1"}}, backendRoute("app.example.com", portOf(ln), Timeouts{}))
	conn, br := dialGateway(t, g.addr)
	for i := range 200 {
		// Idle now: the signals land in the loops' waits.
		time.Sleep(time.Millisecond)
		for _, l := range g.srv.loops {
			if err := unix.Tgkill(unix.Getpid(), int(l.tid.Load()), unix.SIGURG); err != nil {
				t.Fatal(err)
			}
		}
		if resp, body := rawExchange(t, br, conn, fmt.Sprintf("GET /echo?q=%d HTTP/1.1\r\nHost: app.example.com\r\n\r\n", i)); resp.StatusCode != 200 || body != fmt.Sprintf("GET q=%d ", i) {
			t.Fatalf("request %d: %d %q", i, resp.StatusCode, body)
		}
	}
}
