package outbound

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"
)

// listener counts the connections that reach it.
func listener(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return ln.Addr().String(), &n
}

func wantRefused(t *testing.T, what string, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: %v, want %s", what, err, Code)
	}
}

// TestDialContext_RefusesLoopbackUnlessAllowed: the strict policy never
// reaches a listener on loopback, by address or by name; dev's does.
func TestDialContext_RefusesLoopbackUnlessAllowed(t *testing.T) {
	t.Parallel()
	addr, hits := listener(t)
	_, port, _ := net.SplitHostPort(addr)
	ctx := context.Background()
	p := New(Config{})
	for _, a := range []string{addr, "localhost:" + port, "[::ffff:127.0.0.1]:" + port} {
		_, err := p.DialContext(ctx, "tcp", a)
		wantRefused(t, "dial "+a, err)
	}
	// A plain dialer with only Control, resolving with the system
	// resolver, is refused at connect time too.
	_, err := (&net.Dialer{Control: p.Control}).DialContext(ctx, "tcp", "localhost:"+port)
	wantRefused(t, "net.Dialer with Control to localhost", err)
	if n := hits.Load(); n != 0 {
		t.Fatalf("%d connections reached the loopback listener under the strict policy", n)
	}
	dev := New(Config{AllowLoopback: true})
	c, err := dev.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatalf("dev policy to loopback: %v", err)
	}
	c.Close()
}

// TestDialContext_DNSRebinding: a name answers with a public address when
// it is checked ahead (CheckHost) and with loopback when the connection is
// made. The look-ahead passes; the dial, through DialContext and through
// an HTTP client on Transport, is refused, and nothing reaches the
// listener.
func TestDialContext_DNSRebinding(t *testing.T) {
	t.Parallel()
	addr, hits := listener(t)
	_, port, _ := net.SplitHostPort(addr)
	var calls atomic.Int32
	p := New(Config{Lookup: func(_ context.Context, host string) ([]netip.Addr, error) {
		if calls.Add(1) == 1 {
			return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}})
	ctx := context.Background()
	if err := p.CheckHost(ctx, "rebind.test"); err != nil {
		t.Fatalf("the look-ahead saw the public answer and should pass: %v", err)
	}
	_, err := p.DialContext(ctx, "tcp", "rebind.test:"+port)
	wantRefused(t, "dial after rebinding", err)
	c := &http.Client{Transport: p.Transport(), Timeout: 10 * time.Second}
	_, err = c.Get("http://rebind.test:" + port + "/x.git/info/refs")
	wantRefused(t, "HTTP GET after rebinding", err)
	if n := hits.Load(); n != 0 {
		t.Fatalf("%d connections reached loopback through a rebinding name", n)
	}
}

// TestContextTransport: a shared client checks each request under the
// policy its context carries, and fails closed without one.
func TestContextTransport(t *testing.T) {
	t.Parallel()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) })}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	c := &http.Client{Transport: ContextTransport(), Timeout: 10 * time.Second}
	get := func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+ln.Addr().String()+"/", nil)
		res, err := c.Do(req)
		if err == nil {
			res.Body.Close()
		}
		return err
	}
	wantRefused(t, "no policy in the context", get(context.Background()))
	if err := get(WithPolicy(context.Background(), New(Config{AllowLoopback: true}))); err != nil {
		t.Fatalf("dev policy in the context: %v", err)
	}
	wantRefused(t, "strict policy after a dev request", get(WithPolicy(context.Background(), New(Config{}))))
}
