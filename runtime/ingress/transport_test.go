package ingress

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/runtime/ingress/internal/h1"
)

// TestTransport_ReusesAndRecoversConnections drives net/http's side of
// the gateway against a backend that drops idle connections after 100 ms:
// back-to-back GETs and HEADs share one backend connection, a GET after
// the backend dropped it goes out again on a new one instead of failing,
// and a response that says Connection: close is not reused.
func TestTransport_ReusesAndRecoversConnections(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns atomic.Int32
	backendSrv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/close" {
				w.Header().Set("Connection", "close")
			}
			io.WriteString(w, "ok "+r.Method)
		}),
		IdleTimeout: 100 * time.Millisecond,
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		},
	}
	go backendSrv.Serve(ln)
	t.Cleanup(func() { backendSrv.Close() })

	p := NewProxy(t.Context(), slog.New(slog.DiscardHandler), &staticResolver{hosts: map[string][]string{"web": {"127.0.0.1"}}})
	if err := p.SetTable(Table{Version: 1, Routes: []Route{{Hostname: "direct.example.com", Visibility: VisibilityPublic,
		Backend: &Backend{Service: "web", Port: ln.Addr().(*net.TCPAddr).Port}}}}); err != nil {
		t.Fatal(err)
	}
	// The route's liveness probe connects once: count from there.
	waitFor(t, func() bool { return len(p.live.hostnames(p.table.Load())) == 1 })
	waitFor(t, func() bool { return conns.Load() == 1 })
	conns.Store(0)
	gw := httptest.NewServer(p.Handler(ListenerHTTP))
	t.Cleanup(gw.Close)
	do := func(method, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, gw.URL+path, nil)
		req.Host = "direct.example.com"
		resp, err := gw.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	for _, m := range []string{"GET", "HEAD", "GET", "OPTIONS"} {
		want := "ok " + m
		if m == "HEAD" {
			want = ""
		}
		if status, body := do(m, "/"); status != 200 || body != want {
			t.Fatalf("%s: %d %q", m, status, body)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("4 requests in a row used %d backend connections, want 1", n)
	}
	time.Sleep(300 * time.Millisecond) // the backend drops the idle connection
	if status, body := do("GET", "/"); status != 200 || body != "ok GET" {
		t.Fatalf("GET on a connection the backend dropped: %d %q", status, body)
	}
	if n := conns.Load(); n != 2 {
		t.Fatalf("backend connections after it dropped one: %d, want 2", n)
	}
	if status, _ := do("GET", "/close"); status != 200 {
		t.Fatalf("Connection: close: %d", status)
	}
	if status, _ := do("GET", "/"); status != 200 {
		t.Fatalf("after Connection: close: %d", status)
	}
	if n := conns.Load(); n != 3 {
		t.Fatalf("backend connections after Connection: close: %d, want 3", n)
	}
}

// TestCopyResponseFields checks the fields a client gets from a backend's
// head: names as net/http writes them (the common ones included, in any
// case), repeated fields in order, hop-by-hop fields and those Connection
// names left out.
func TestCopyResponseFields(t *testing.T) {
	t.Parallel()
	head := "HTTP/1.1 200 OK\r\ncontent-TYPE: text/plain\r\nSET-COOKIE: a=1\r\nX-Custom-thing: x\r\n" +
		"Connection: x-drop\r\nX-Drop: secret\r\nKeep-Alive: timeout=5\r\nset-cookie: b=2\r\nETAG: \"v1\"\r\n" +
		"Content-Length: 0\r\n\r\n"
	var rs h1.Response
	if err := h1.ParseResponse([]byte(head), maxHeaderBytes, &rs); err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	copyResponseFields(h, &rs)
	want := http.Header{
		"Content-Type":   {"text/plain"},
		"Set-Cookie":     {"a=1", "b=2"},
		"X-Custom-Thing": {"x"},
		"Etag":           {`"v1"`},
		"Content-Length": {"0"},
	}
	if !reflect.DeepEqual(h, want) {
		t.Errorf("copied %v, want %v", h, want)
	}
	for _, n := range commonNames {
		for _, name := range []string{n[0], strings.ToUpper(n[0]), n[1]} {
			if got, want := canonicalName([]byte(name)), http.CanonicalHeaderKey(name); got != want {
				t.Errorf("canonicalName(%q) = %q, want %q", name, got, want)
			}
		}
	}
}
