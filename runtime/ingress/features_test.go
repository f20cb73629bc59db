package ingress

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// featureBackend answers the paths TestGateway_Features asks for. started
// receives once the /upload handler read the first bytes of a body.
func featureBackend(t *testing.T, ln net.Listener, idle time.Duration, started chan<- struct{}) {
	t.Helper()
	big := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	srv := &http.Server{IdleTimeout: idle, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/headers":
			fmt.Fprintf(w, "xff=%q forwarded=%q proto=%q xhost=%q realip=%q secret=%q keepalive=%q expect=%q host=%q",
				r.Header.Values("X-Forwarded-For"), r.Header.Get("Forwarded"), r.Header.Values("X-Forwarded-Proto"),
				r.Header.Values("X-Forwarded-Host"), r.Header.Values("X-Real-Ip"), r.Header.Get("X-Secret"), r.Header.Get("Keep-Alive"), r.Header.Get("Expect"), r.Host)
		case "/plain":
			// No Content-Type: none must be added on the way.
			w.Header()["Content-Type"] = nil
			w.Header().Add("Set-Cookie", "a=1")
			w.Header().Add("Set-Cookie", "b=2")
			fmt.Fprintf(w, "cookie=%q", r.Header.Values("Cookie"))
		case "/echo":
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			fmt.Fprintf(w, "%s %s", r.Method, body)
		case "/upload":
			first := make([]byte, 1)
			if _, err := io.ReadFull(r.Body, first); err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			started <- struct{}{}
			n, err := io.Copy(io.Discard, r.Body)
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			fmt.Fprintf(w, "received %d", n+1)
		case "/big":
			w.Header().Set("Content-Length", fmt.Sprint(len(big)))
			w.Write(big)
		case "/slow-events":
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range 5 {
				fmt.Fprintf(w, "data: %d\n\n", i)
				w.(http.Flusher).Flush()
				time.Sleep(150 * time.Millisecond)
			}
		case "/ws":
			echoWebsocket(w)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// rawExchange writes a request on conn as it is and reads the response.
func rawExchange(t *testing.T, br *bufio.Reader, conn net.Conn, request string) (*http.Response, string) {
	t.Helper()
	if _, err := io.WriteString(conn, request); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

func dialGateway(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(15 * time.Second))
	return conn, bufio.NewReader(conn)
}

// TestGateway_Features covers what the gateway does for requests on the
// plain-HTTP listener, whichever way they are served (the event loop, or
// net/http after a hand-over): stream uploads and long responses, keep
// streams open past the response header timeout, answer 100-continue,
// drop the client's forwarding and hop-by-hop headers, switch to a
// websocket mid-connection, and send a POST again when the backend had
// closed the pooled connection.
func TestGateway_Features(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	port := freePort(t)
	started := make(chan struct{}, 4)
	for _, ip := range []string{"127.0.0.1", "127.0.0.2"} {
		ln, err := net.Listen("tcp", net.JoinHostPort(ip, fmt.Sprint(port)))
		if err != nil {
			t.Fatal(err)
		}
		idle := time.Duration(0)
		if ip == "127.0.0.2" {
			// This one drops idle connections quickly.
			idle = 100 * time.Millisecond
		}
		featureBackend(t, ln, idle, started)
	}
	b.resolver.set("web", "127.0.0.1")
	b.resolver.set("idle", "127.0.0.2")
	b.publish(t, 1,
		Route{Hostname: "fast.example.com", Visibility: VisibilityPublic, Backend: &Backend{Service: "web", Port: port},
			Timeouts: Timeouts{ResponseHeaderMS: 300}},
		Route{Hostname: "idle.example.com", Visibility: VisibilityPublic, Backend: &Backend{Service: "idle", Port: port}},
	)
	url := "http://" + b.addrs.HTTP

	upload := func(t *testing.T, length int64) {
		pr, pw := io.Pipe()
		req, _ := http.NewRequest(http.MethodPost, url+"/upload", pr)
		req.Host = "fast.example.com"
		req.ContentLength = length
		type result struct {
			resp *http.Response
			err  error
		}
		done := make(chan result, 1)
		go func() { resp, err := noRedirects.Do(req); done <- result{resp, err} }()
		chunk := bytes.Repeat([]byte("u"), 64<<10)
		if _, err := pw.Write(chunk); err != nil {
			t.Fatal(err)
		}
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatal("the backend got nothing while the upload was under way: the gateway buffers it")
		}
		for sent := int64(len(chunk)); sent < 6<<20; sent += int64(len(chunk)) {
			if _, err := pw.Write(chunk); err != nil {
				t.Fatal(err)
			}
		}
		pw.Close()
		r := <-done
		if r.err != nil {
			t.Fatal(r.err)
		}
		body, _ := io.ReadAll(r.resp.Body)
		r.resp.Body.Close()
		if want := fmt.Sprintf("received %d", 6<<20); r.resp.StatusCode != 200 || string(body) != want {
			t.Fatalf("%d %q, want 200 %q", r.resp.StatusCode, body, want)
		}
	}
	t.Run("a chunked upload streams to the backend", func(t *testing.T) { upload(t, -1) })
	t.Run("an upload of known length streams to the backend", func(t *testing.T) { upload(t, 6<<20) })

	t.Run("a stream outlives the response header timeout", func(t *testing.T) {
		start := time.Now()
		status, body, _ := get(t, b.addrs.HTTP, "fast.example.com", "/slow-events")
		if status != 200 || strings.Count(body, "data: ") != 5 {
			t.Fatalf("%d %q, want all 5 events", status, body)
		}
		if d := time.Since(start); d < 500*time.Millisecond {
			t.Fatalf("took %s: the backend's pauses were not waited for", d)
		}
	})

	t.Run("a large response arrives whole, and HEAD keeps its length", func(t *testing.T) {
		status, body, _ := get(t, b.addrs.HTTP, "fast.example.com", "/big")
		if status != 200 || len(body) != 1<<20 || body[:16] != "0123456789abcdef" || body[len(body)-16:] != "0123456789abcdef" {
			t.Fatalf("%d, %d bytes", status, len(body))
		}
		req, _ := http.NewRequest(http.MethodHead, url+"/big", nil)
		req.Host = "fast.example.com"
		resp, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.ContentLength != 1<<20 {
			t.Fatalf("HEAD: %d length %d", resp.StatusCode, resp.ContentLength)
		}
	})

	t.Run("100-continue", func(t *testing.T) {
		conn, br := dialGateway(t, b.addrs.HTTP)
		io.WriteString(conn, "POST /echo HTTP/1.1\r\nHost: fast.example.com\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
		line, err := br.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
			t.Fatalf("interim answer %q %v, want 100 Continue", line, err)
		}
		if _, err := br.ReadString('\n'); err != nil { // the blank line
			t.Fatal(err)
		}
		resp, body := rawExchange(t, br, conn, "hello")
		if resp.StatusCode != 200 || body != "POST hello" {
			t.Fatalf("%d %q", resp.StatusCode, body)
		}
	})

	t.Run("forwarding headers are the gateway's, however the client spells them", func(t *testing.T) {
		const spoofed = "x-forwarded-for: 6.6.6.6\r\nX-Forwarded-For: 7.7.7.7\r\nx-forwarded-proto: https\r\nX-FORWARDED-HOST: evil.example\r\n" +
			"forwarded: for=1.2.3.4\r\nX-Real-IP: 6.6.6.6\r\n"
		for _, req := range []string{
			// Served by the event loop.
			"GET /headers HTTP/1.1\r\nHost: fast.example.com\r\n" + spoofed + "\r\n",
			// Handed over to net/http (HTTP/1.0).
			"GET /headers HTTP/1.0\r\nHost: fast.example.com\r\n" + spoofed + "\r\n",
			// Absolute form: the authority routes and is forwarded.
			"GET http://fast.example.com/headers HTTP/1.1\r\nHost: evil.example\r\n" + spoofed + "\r\n",
		} {
			conn, br := dialGateway(t, b.addrs.HTTP)
			_, body := rawExchange(t, br, conn, req)
			want := `xff=["127.0.0.1"] forwarded="" proto=["http"] xhost=["fast.example.com"] realip=["127.0.0.1"]`
			if !strings.HasPrefix(body, want) || !strings.HasSuffix(body, `host="fast.example.com"`) {
				t.Fatalf("%q: backend saw %q, want %q and host fast.example.com", req, body, want)
			}
		}
	})

	t.Run("headers pass as the application wrote them", func(t *testing.T) {
		conn, br := dialGateway(t, b.addrs.HTTP)
		resp, body := rawExchange(t, br, conn, "GET /plain HTTP/1.1\r\nHost: fast.example.com\r\nCookie: a=1; weird; b=\"x y\"\r\n\r\n")
		if want := `cookie=["a=1; weird; b=\"x y\""]`; body != want {
			t.Fatalf("backend saw %s, want %s", body, want)
		}
		if ct, ok := resp.Header["Content-Type"]; ok || len(resp.Header.Values("Set-Cookie")) != 2 {
			t.Fatalf("Content-Type %q (want none), Set-Cookie %q (want both)", ct, resp.Header.Values("Set-Cookie"))
		}
	})

	t.Run("hop-by-hop headers stop at the gateway", func(t *testing.T) {
		conn, br := dialGateway(t, b.addrs.HTTP)
		_, body := rawExchange(t, br, conn, "GET /headers HTTP/1.1\r\nHost: fast.example.com\r\nConnection: keep-alive, X-Secret\r\nX-Secret: 1\r\nKeep-Alive: timeout=5\r\n\r\n")
		if !strings.Contains(body, `secret="" keepalive=""`) {
			t.Fatalf("backend saw %q", body)
		}
		// Connection cannot remove the headers that frame the body.
		resp, body := rawExchange(t, br, conn, "POST /echo HTTP/1.1\r\nHost: fast.example.com\r\nConnection: Content-Length, Host\r\nContent-Length: 5\r\n\r\nhello")
		if resp.StatusCode != 200 || body != "POST hello" {
			t.Fatalf("%d %q", resp.StatusCode, body)
		}
	})

	t.Run("a websocket after a request on the same connection", func(t *testing.T) {
		conn, br := dialGateway(t, b.addrs.HTTP)
		if resp, _ := rawExchange(t, br, conn, "GET /headers HTTP/1.1\r\nHost: fast.example.com\r\n\r\n"); resp.StatusCode != 200 {
			t.Fatalf("first request: %d", resp.StatusCode)
		}
		io.WriteString(conn, "GET /ws HTTP/1.1\r\nHost: fast.example.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("upgrade: %v %v", resp, err)
		}
		io.WriteString(conn, "hi there\n")
		if line, err := br.ReadString('\n'); err != nil || line != "echo hi there\n" {
			t.Fatalf("echo: %q %v", line, err)
		}
	})

	t.Run("a POST goes out again when the backend closed the pooled connection", func(t *testing.T) {
		post := func() {
			t.Helper()
			req, _ := http.NewRequest(http.MethodPost, url+"/echo", strings.NewReader("note"))
			req.Host = "idle.example.com"
			resp, err := noRedirects.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(body) != "POST note" {
				t.Fatalf("%d %q", resp.StatusCode, body)
			}
		}
		post()
		time.Sleep(300 * time.Millisecond) // the backend drops the idle connection
		post()
	})
}

// readResponse reads a response to method on br, with its whole body.
func readResponse(t *testing.T, br *bufio.Reader, method string) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("reading the response to %s: %v", method, err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the body of %s %d: %v", method, resp.StatusCode, err)
	}
	return resp, string(body)
}
