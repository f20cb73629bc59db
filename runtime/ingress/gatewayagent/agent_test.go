package gatewayagent

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/slipwayhq/slipway/runtime/ingress"
)

// TestRelay_AddsTheTokenAndStreams forwards the gateway's requests from the
// socket to serve's feed with the gateway token (a token the gateway sent
// is replaced), streaming a response that is still being written.
func TestRelay_AddsTheTokenAndStreams(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	feed := httptest.NewServer(ingress.RequireToken("s3cret", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first:"+r.Method+" "+r.URL.RequestURI()+"\n")
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, "second\n")
	})))
	defer feed.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := &Agent{ControlURL: feed.URL, Token: "s3cret", SocketDir: t.TempDir(), Log: slog.New(slog.DiscardHandler)}
	if err := a.relay(ctx); err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", filepath.Join(a.SocketDir, SocketName))
	}}}
	req, _ := http.NewRequest(http.MethodGet, "http://gateway"+ingress.RoutesPath+"?after=3", nil)
	req.Header.Set("Authorization", "Bearer wrong")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	buf := make([]byte, 64)
	n, err := resp.Body.Read(buf)
	if err != nil || string(buf[:n]) != "first:GET "+ingress.RoutesPath+"?after=3\n" {
		t.Fatalf("first chunk before the feed finished: %q %v", buf[:n], err)
	}
	close(release)
	rest, _ := io.ReadAll(resp.Body)
	if string(rest) != "second\n" {
		t.Fatalf("rest %q", rest)
	}
}

// TestApply_KeepsTheBackendNetworks takes the networks of the table's
// backends (not of redirects) and those it asks the gateways to join, nil
// until a table came.
func TestApply_KeepsTheBackendNetworks(t *testing.T) {
	t.Parallel()
	a := &Agent{changed: make(chan struct{}, 1)}
	if a.routed() != nil {
		t.Fatal("networks known before any table")
	}
	_ = a.apply(ingress.Table{Routes: []ingress.Route{
		{Hostname: "a.example.com", Backend: &ingress.Backend{Service: "slw-a-web", Port: 8080, Network: "slw-a-ingress"}},
		{Hostname: "b.example.com", Backend: &ingress.Backend{Service: "slw-a-api", Port: 8080, Network: "slw-a-ingress"}},
		{Hostname: "c.example.com", Backend: &ingress.Backend{Service: "slw-c-web", Port: 80, Network: "slw-c-ingress"}},
		{Hostname: "old.example.com", Redirect: &ingress.Redirect{To: "https://a.example.com"}},
	}, Networks: []string{"slw-d-ingress", "slw-a-ingress"}})
	got := a.routed()
	if len(got) != 3 || !got["slw-a-ingress"] || !got["slw-c-ingress"] || !got["slw-d-ingress"] {
		t.Fatalf("networks %v", got)
	}
	select {
	case <-a.changed:
	default:
		t.Fatal("a new table did not wake the agent")
	}
	_ = a.apply(ingress.Table{})
	if got := a.routed(); got == nil || len(got) != 0 {
		t.Fatalf("networks of an empty table %v, want none (and known)", got)
	}
}
