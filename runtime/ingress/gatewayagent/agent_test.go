package gatewayagent

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"

	"github.com/slipwayhq/slipway/runtime/ingress"
	"github.com/slipwayhq/slipway/runtime/ingress/gatewayctl"
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
	if _, err := a.relay(ctx); err != nil {
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

// engine records the removals a stopping agent makes; anything else it is
// asked panics (the embedded nil interface).
type engine struct {
	client.APIClient
	removed []string
}

func (e *engine) ContainerRemove(_ context.Context, id string, _ container.RemoveOptions) error {
	e.removed = append(e.removed, "container "+id)
	return nil
}

func (e *engine) NetworkRemove(_ context.Context, id string) error {
	e.removed = append(e.removed, "network "+id)
	return nil
}

// TestLeave_RemovesTheGatewayOnlyWhenServeSaysSo: a stopping agent asks
// serve (with the token) about its node and gateway; it removes the
// gateway's container and bridge only when serve answers remove, and
// keeps them when serve says the node is still an ingress node, cannot
// be reached, or the agent knows no node.
func TestLeave_RemovesTheGatewayOnlyWhenServeSaysSo(t *testing.T) {
	t.Parallel()
	var asked ingress.LeaveRequest
	remove := false
	feed := httptest.NewServer(ingress.RequireToken("s3cret", ingress.LeaveHandler(func(_ context.Context, r ingress.LeaveRequest) (ingress.LeaveAnswer, error) {
		asked = r
		return ingress.LeaveAnswer{Remove: remove}, nil
	})))
	defer feed.Close()
	stop := func(url, node string) []string {
		e := &engine{}
		a := &Agent{Engine: e, ControlURL: url, Token: "s3cret", GatewayName: "slipway-gateway@node2", NodeID: node,
			Log: slog.New(slog.DiscardHandler), client: feed.Client()}
		a.leave(gatewayctl.New(e, a.Log, ""))
		return e.removed
	}
	if got := stop(feed.URL, "n0de2"); len(got) != 0 {
		t.Fatalf("still an ingress node: removed %v", got)
	}
	if asked != (ingress.LeaveRequest{Gateway: "slipway-gateway@node2", Node: "n0de2"}) {
		t.Fatalf("serve was asked %+v", asked)
	}
	remove = true
	if got := stop(feed.URL, "n0de2"); !slices.Equal(got, []string{"container " + gatewayctl.ContainerName, "network " + gatewayctl.ContainerName}) {
		t.Fatalf("no longer an ingress node: removed %v, want the container and its bridge", got)
	}
	if got := stop(feed.URL, ""); len(got) != 0 {
		t.Fatalf("without a node ID: removed %v", got)
	}
	unreachable := httptest.NewServer(http.NotFoundHandler())
	unreachable.Close()
	if got := stop(unreachable.URL, "n0de2"); len(got) != 0 {
		t.Fatalf("serve unreachable: removed %v", got)
	}
}
