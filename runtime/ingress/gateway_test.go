package ingress

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/certmagic"
)

// staticResolver stands in for Docker's embedded DNS: service name →
// addresses, changeable while the gateway runs.
type staticResolver struct {
	mu    sync.Mutex
	hosts map[string][]string
}

func (r *staticResolver) set(name string, addrs ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hosts[name] = addrs
}

func (r *staticResolver) LookupHost(_ context.Context, host string) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a, ok := r.hosts[host]; ok && len(a) > 0 {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// controlPlane is a Publisher served on a unix socket, as serve does.
type controlPlane struct {
	pub    *Publisher
	socket string
	srv    *http.Server

	mu     sync.Mutex
	report *CertificateReport // the last certificate report received
}

// certificate returns the last reported state of hostname.
func (cp *controlPlane) certificate(hostname string) (CertificateStatus, bool) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.report != nil {
		for _, c := range cp.report.Certificates {
			if c.Hostname == hostname {
				return c, true
			}
		}
	}
	return CertificateStatus{}, false
}

func startControlPlane(t *testing.T, pub *Publisher, socket string) *controlPlane {
	t.Helper()
	os.Remove(socket)
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(RoutesPath, pub)
	cp := &controlPlane{pub: pub, socket: socket, srv: &http.Server{Handler: mux}}
	mux.Handle(CertificatesPath, CertificateReceiver(func(_ context.Context, r CertificateReport) error {
		cp.mu.Lock()
		defer cp.mu.Unlock()
		cp.report = &r
		return nil
	}))
	// The shared certificate storage gateways use with ACME, on files
	// here (serve's is on Postgres: certstore).
	mux.Handle(StoragePath, StorageHandler(&certmagic.FileStorage{Path: socket + ".certs"}, nil))
	go cp.srv.Serve(ln)
	t.Cleanup(func() { cp.srv.Close(); os.RemoveAll(socket + ".certs") })
	return cp
}

func (cp *controlPlane) stop() { cp.srv.Close() }

// shortDir returns a temporary directory with a path short enough for a
// unix socket (108 bytes), which t.TempDir is not always.
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "gw")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

type testBundle struct {
	dir      string
	cp       *controlPlane
	resolver *staticResolver
	addrs    Addrs
	stop     func()
}

func setup(t *testing.T, withTLS bool) *testBundle {
	t.Helper()
	return setupWith(t, func(cfg *Config) {
		if withTLS {
			cfg.HTTPSAddr = "127.0.0.1:0"
			cfg.TLS.InternalCA = true
		}
	})
}

// setupWith starts a gateway whose configuration configure changes.
func setupWith(t *testing.T, configure func(*Config)) *testBundle {
	t.Helper()
	dir := shortDir(t)
	pub := NewPublisher()
	pub.Wait = 2 * time.Second
	b := &testBundle{dir: dir, cp: startControlPlane(t, pub, filepath.Join(dir, "cp.sock")), resolver: &staticResolver{hosts: map[string][]string{}}}
	b.startWith(t, configure)
	return b
}

func (b *testBundle) start(t *testing.T, withTLS bool) {
	t.Helper()
	b.startWith(t, func(cfg *Config) {
		if withTLS {
			cfg.HTTPSAddr = "127.0.0.1:0"
			cfg.TLS.InternalCA = true
		}
	})
}

func (b *testBundle) startWith(t *testing.T, configure func(*Config)) {
	t.Helper()
	cfg := Config{
		HTTPAddr:    "127.0.0.1:0",
		PrivateAddr: "127.0.0.1:0",
		Source:      Source{SocketPath: b.cp.socket},
		DataDir:     filepath.Join(b.dir, "data"),
		Log:         slog.New(slog.NewTextHandler(io.Discard, nil)),
		Resolver:    b.resolver,
		// Every test's requests go through the metrics recorder too.
		MetricsAddr:  "127.0.0.1:0",
		MetricsToken: testMetricsToken,
	}
	configure(&cfg)
	ready := make(chan Addrs, 1)
	cfg.Ready = func(a Addrs) { ready <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg) }()
	select {
	case b.addrs = <-ready:
	case err := <-done:
		t.Fatalf("gateway: %v", err)
	}
	var once sync.Once
	b.stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(b.stop)
}

// publish publishes routes and waits until the gateway serves the version.
func (b *testBundle) publish(t *testing.T, version int64, routes ...Route) {
	t.Helper()
	if err := b.cp.pub.Publish(Table{Version: version, Routes: routes}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		t, err := LoadTable(filepath.Join(b.dir, "data", "routes.json"))
		return err == nil && t.Version == version
	})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 15s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// backend starts an HTTP server on ip (a 127.0.0.0/8 address) and port,
// answering with name and the headers the gateway set.
func backend(t *testing.T, ip string, port int, name string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, fmt.Sprint(port)))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s host=%s xff=%s proto=%s xhost=%s", name, r.Host, r.Header.Get("X-Forwarded-For"), r.Header.Get("X-Forwarded-Proto"), r.Header.Get("X-Forwarded-Host"))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

var noRedirects = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Timeout:       10 * time.Second,
}

func get(t *testing.T, addr, host, path string, header ...string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	req.Host = host
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatalf("GET %s%s: %v", host, path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header
}

func TestGateway_Routing(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	port := freePort(t)
	backend(t, "127.0.0.1", port, "notes")
	backend(t, "127.0.0.2", port, "tenants")
	backend(t, "127.0.0.3", port, "secret")
	b.resolver.set("notes_web", "127.0.0.1")
	b.resolver.set("tenants_web", "127.0.0.2")
	b.resolver.set("secret_web", "127.0.0.3")
	b.publish(t, 1,
		Route{Hostname: "notes.example.com", Visibility: VisibilityPublic, Backend: &Backend{Service: "notes_web", Port: port}},
		Route{Hostname: "*.tenants.example.com", Visibility: VisibilityPublic, Backend: &Backend{Service: "tenants_web", Port: port}},
		Route{Hostname: "admin.example.com", Visibility: VisibilityPrivate, Backend: &Backend{Service: "secret_web", Port: port}},
		Route{Hostname: "www.notes.example.com", Visibility: VisibilityPublic, Redirect: &Redirect{To: "https://notes.example.com", PreservePath: true}},
		Route{Hostname: "old.example.com", Visibility: VisibilityPublic, Redirect: &Redirect{To: "https://notes.example.com/moved", Status: 302}},
	)
	tests := []struct {
		name     string
		addr     string
		host     string
		path     string
		status   int
		body     string
		location string
	}{
		{"exact", b.addrs.HTTP, "notes.example.com", "/", 200, "notes host=notes.example.com", ""},
		{"exact mixed case with port", b.addrs.HTTP, "Notes.Example.COM:80", "/", 200, "notes ", ""},
		{"wildcard", b.addrs.HTTP, "acme.tenants.example.com", "/", 200, "tenants host=acme.tenants.example.com", ""},
		{"wildcard two labels deep", b.addrs.HTTP, "a.acme.tenants.example.com", "/", 404, "no application", ""},
		{"foreign", b.addrs.HTTP, "notes.example.org", "/", 404, "no application", ""},
		{"private on public listener", b.addrs.HTTP, "admin.example.com", "/", 404, "no application", ""},
		{"private on private listener", b.addrs.Private, "admin.example.com", "/", 200, "secret", ""},
		{"public on private listener", b.addrs.Private, "notes.example.com", "/", 200, "notes", ""},
		{"redirect preserving path", b.addrs.HTTP, "www.notes.example.com", "/a/b?c=1", 308, "", "https://notes.example.com/a/b?c=1"},
		{"redirect without path", b.addrs.HTTP, "old.example.com", "/a/b?c=1", 302, "", "https://notes.example.com/moved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body, h := get(t, tt.addr, tt.host, tt.path)
			if status != tt.status || !strings.Contains(body, tt.body) || h.Get("Location") != tt.location {
				t.Fatalf("got %d %q Location=%q, want %d %q Location=%q", status, body, h.Get("Location"), tt.status, tt.body, tt.location)
			}
		})
	}
	t.Run("forwarded headers are ours, not the client's", func(t *testing.T) {
		_, body, _ := get(t, b.addrs.HTTP, "notes.example.com", "/", "X-Forwarded-For", "6.6.6.6", "X-Forwarded-Proto", "https", "X-Forwarded-Host", "evil.example")
		if want := "xff=127.0.0.1 proto=http xhost=notes.example.com"; !strings.Contains(body, want) {
			t.Fatalf("body %q, want %q", body, want)
		}
	})
}

func TestGateway_Balancing(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	port := freePort(t)
	backend(t, "127.0.0.1", port, "one")
	backend(t, "127.0.0.2", port, "two")
	// 127.0.0.4 has no listener: a task that went away.
	b.resolver.set("web", "127.0.0.1", "127.0.0.2", "127.0.0.4")
	b.publish(t, 1, Route{Hostname: "notes.example.com", Visibility: VisibilityPublic, Backend: &Backend{Service: "web", Port: port}})
	seen := map[string]int{}
	for range 60 {
		status, body, _ := get(t, b.addrs.HTTP, "notes.example.com", "/")
		if status != 200 {
			t.Fatalf("status %d %q: a dead backend must be skipped", status, body)
		}
		seen[strings.Fields(body)[0]]++
	}
	if seen["one"] < 10 || seen["two"] < 10 {
		t.Fatalf("both backends should get traffic: %v", seen)
	}
	// A POST whose body was never sent is retried on the next backend too.
	for range 10 {
		req, _ := http.NewRequest(http.MethodPost, "http://"+b.addrs.HTTP+"/", strings.NewReader("payload"))
		req.Host = "notes.example.com"
		resp, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("POST status %d", resp.StatusCode)
		}
	}
	// No task at all: 502, not a hang.
	b.resolver.set("web")
	waitFor(t, func() bool {
		s, _, _ := get(t, b.addrs.HTTP, "notes.example.com", "/")
		return s == http.StatusBadGateway
	})
}

func TestGateway_Streams(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	port := freePort(t)
	release := make(chan struct{})
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/events":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: first\n\n")
			w.(http.Flusher).Flush()
			<-release
			fmt.Fprint(w, "data: second\n\n")
		case "/ws":
			if r.Header.Get("Upgrade") != "websocket" {
				http.Error(w, "want upgrade", 400)
				return
			}
			echoWebsocket(w)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { close(release); srv.Close() })
	b.resolver.set("web", "127.0.0.1")
	b.publish(t, 1, Route{Hostname: "s.example.com", Visibility: VisibilityPublic, Backend: &Backend{Service: "web", Port: port}})

	t.Run("server-sent events arrive before the response ends", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+b.addrs.HTTP+"/events", nil)
		req.Host = "s.example.com"
		resp, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		if err != nil || line != "data: first\n" {
			t.Fatalf("first event: %q %v", line, err)
		}
	})
	t.Run("websocket upgrade", func(t *testing.T) {
		conn, err := net.Dial("tcp", b.addrs.HTTP)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprint(conn, "GET /ws HTTP/1.1\r\nHost: s.example.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("upgrade: %v %v", resp, err)
		}
		fmt.Fprint(conn, "hello\n")
		line, err := br.ReadString('\n')
		if err != nil || line != "echo hello\n" {
			t.Fatalf("echo: %q %v", line, err)
		}
	})
}

func TestGateway_ControlPlaneDown(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	port := freePort(t)
	backend(t, "127.0.0.1", port, "one")
	b.resolver.set("web", "127.0.0.1")
	b.publish(t, 1, Route{Hostname: "a.example.com", Visibility: VisibilityPublic, Backend: &Backend{Service: "web", Port: port}})

	b.cp.stop()
	if s, _, _ := get(t, b.addrs.HTTP, "a.example.com", "/"); s != 200 {
		t.Fatalf("control plane down: status %d, want the last table served", s)
	}
	// A gateway restarted while the control plane is down serves its
	// stored table.
	b.stop()
	b.start(t, false)
	if s, _, _ := get(t, b.addrs.HTTP, "a.example.com", "/"); s != 200 {
		t.Fatalf("restarted with control plane down: status %d", s)
	}
	// The control plane comes back with a new version: the new route appears.
	pub := b.cp.pub
	b.cp = startControlPlane(t, pub, b.cp.socket)
	if err := pub.Publish(Table{Version: 2, Routes: []Route{
		{Hostname: "a.example.com", Visibility: VisibilityPublic, Backend: &Backend{Service: "web", Port: port}},
		{Hostname: "b.example.com", Visibility: VisibilityPublic, Backend: &Backend{Service: "web", Port: port}},
	}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { s, _, _ := get(t, b.addrs.HTTP, "b.example.com", "/"); return s == 200 })
}

func TestGateway_InternalCAHTTP2(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	port := freePort(t)
	backend(t, "127.0.0.1", port, "one")
	b.resolver.set("web", "127.0.0.1")
	b.publish(t, 1,
		Route{Hostname: "*.dev.example.com", Visibility: VisibilityPublic, Backend: &Backend{Service: "web", Port: port}},
		Route{Hostname: "hidden.example.com", Visibility: VisibilityPrivate, Backend: &Backend{Service: "web", Port: port}})
	rootPEM, err := os.ReadFile(filepath.Join(b.dir, "data", "internal-ca", "root.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(rootPEM)
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool},
		ForceAttemptHTTP2: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", b.addrs.HTTPS)
		},
	}, Timeout: 10 * time.Second}
	resp, err := client.Get("https://feat-1.dev.example.com/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 || !strings.Contains(string(body), "proto=https") {
		t.Fatalf("proto %s body %q: want HTTP/2 and X-Forwarded-Proto https", resp.Proto, body)
	}
	// Plain HTTP is not redirected for an internal-CA certificate.
	if s, _, _ := get(t, b.addrs.HTTP, "feat-1.dev.example.com", "/"); s != 200 {
		t.Fatalf("plain HTTP status %d, want 200", s)
	}
	// No certificate for private or unknown names on the public port.
	if _, err := client.Get("https://hidden.example.com/"); err == nil {
		t.Fatal("a private route must not get a certificate on the public listener")
	}
}

func TestPublisher_LongPoll(t *testing.T) {
	t.Parallel()
	pub := NewPublisher()
	pub.Wait = 300 * time.Millisecond
	dir := shortDir(t)
	cp := startControlPlane(t, pub, filepath.Join(dir, "cp.sock"))
	f := &Feeder{Source: Source{SocketPath: cp.socket}, Log: slog.Default()}
	if err := f.init(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, _, err := f.poll(ctx, -1); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("before the first Publish: %v, want 503", err)
	}
	if err := pub.Publish(Table{Version: 3}); err != nil {
		t.Fatal(err)
	}
	if tbl, changed, err := f.poll(ctx, -1); err != nil || !changed || tbl.Version != 3 {
		t.Fatalf("first poll: %v %v %v", tbl, changed, err)
	}
	if _, changed, err := f.poll(ctx, 3); err != nil || changed {
		t.Fatalf("no change: changed=%v err=%v, want 304", changed, err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		pub.Publish(Table{Version: 4})
	}()
	if tbl, changed, err := f.poll(ctx, 3); err != nil || !changed || tbl.Version != 4 {
		t.Fatalf("long-poll wake-up: %v %v %v", tbl, changed, err)
	}
	if err := pub.Publish(Table{Version: 5, Routes: []Route{{Hostname: "bad"}}}); err == nil {
		t.Fatal("Publish accepted an invalid table")
	}
	// TCP with a token.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	srv := &http.Server{Handler: RequireToken("s3cret", pub)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	for _, tc := range []struct {
		token string
		ok    bool
	}{{"s3cret", true}, {"wrong", false}, {"", false}} {
		f := &Feeder{Source: Source{URL: "http://" + ln.Addr().String(), Token: tc.token}}
		f.init()
		_, _, err := f.poll(ctx, -1)
		if (err == nil) != tc.ok {
			t.Fatalf("token %q: err %v", tc.token, err)
		}
	}
}

func TestGateway_RouteTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	port := freePort(t)
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(3 * time.Second):
		case <-r.Context().Done():
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	b.resolver.set("slow", "127.0.0.1")
	b.publish(t, 1, Route{Hostname: "slow.example.com", Visibility: VisibilityPublic,
		Backend: &Backend{Service: "slow", Port: port}, Timeouts: Timeouts{ResponseHeaderMS: 200}})
	start := time.Now()
	if s, _, _ := get(t, b.addrs.HTTP, "slow.example.com", "/"); s != http.StatusGatewayTimeout {
		t.Fatalf("status %d, want 504 from the route's response header timeout", s)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %s: the timeout was not applied (or was retried)", d)
	}
}

// echoWebsocket switches protocols and echoes the first line it reads.
func echoWebsocket(w http.ResponseWriter) {
	conn, rw, _ := w.(http.Hijacker).Hijack()
	defer conn.Close()
	rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
	rw.Flush()
	line, _ := rw.ReadString('\n')
	rw.WriteString("echo " + line)
	rw.Flush()
}
