package gatewayfeed_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/gatewayfeed"

	"github.com/slipwayhq/slipway/runtime/ingress"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// TestStart_PublishesStoreChanges serves the table on the socket, empty at first, and
// hands a long-polling gateway the next version once a route is stored.
func TestStart_PublishesStoreChanges(t *testing.T) {
	t.Parallel()
	ctx, st, dir := startOnSocket(t)
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("socket directory: %v %v", fi.Mode(), err)
	}
	// A second control plane on the same directory refuses to take over.
	if _, err := gatewayfeed.Start(ctx, st, nil, dir, gatewayfeed.TCP{}, slog.New(slog.DiscardHandler)); err == nil {
		t.Fatal("a second feed took over a live socket")
	}
	c := socketClient(dir)
	fetch := func(after int64) (int, ingress.Table) { return fetchTable(t, c, after) }
	var first ingress.Table
	deadline := time.Now().Add(10 * time.Second)
	for {
		// 503 until the first publish.
		status, tab := fetch(-1)
		if status == http.StatusOK {
			first = tab
			break
		}
		if status != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("first table: status %d", status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(first.Routes) != 0 {
		t.Fatalf("fresh database published routes: %+v", first.Routes)
	}

	tenant := storetest.NewTenant(t, st, "feed", "notes")
	team, env := tenant.Team, tenant.Env
	go func() {
		time.Sleep(200 * time.Millisecond)
		_ = st.SetEnvironmentRoutes(ctx, team.ID, env.ID, []store.DeployedRoute{
			{Hostname: "notes.example.com", Visibility: "public", Service: "web", BackendService: "slw-x-web", BackendPort: 8080, BackendNetwork: "slw-x-ingress"},
			{Hostname: "old.example.com", Visibility: "private", RedirectTo: "https://notes.example.com", RedirectStatus: 301, PreservePath: true},
		})
	}()
	// The long-poll waits for the next version.
	status, next := fetch(first.Version)
	if status != http.StatusOK || next.Version <= first.Version || len(next.Routes) != 2 {
		t.Fatalf("next table: status %d %+v", status, next)
	}
	if err := next.Validate(); err != nil {
		t.Fatalf("published table does not validate: %v", err)
	}
	web, old := next.Routes[0], next.Routes[1]
	if web.Backend == nil || web.Backend.Service != "slw-x-web" || web.Backend.Port != 8080 || web.Backend.Network != "slw-x-ingress" ||
		web.Visibility != ingress.VisibilityPublic || web.TeamID != team.ID || web.EnvID != env.ID {
		t.Fatalf("backend route = %+v", web)
	}
	if old.Redirect == nil || old.Redirect.Status != 301 || !old.Redirect.PreservePath || old.Visibility != ingress.VisibilityPrivate {
		t.Fatalf("redirect route = %+v", old)
	}
}

// TestStart_StoresAddressReports takes a gateway agent's report of its
// gateway's addresses into the store and refuses an invalid one.
func TestStart_StoresAddressReports(t *testing.T) {
	t.Parallel()
	ctx, st, dir := startOnSocket(t)
	c := socketClient(dir)
	put := func(body string) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodPut, "http://gateway"+ingress.AddressesPath, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := put(`{"gateway":"slipway-gateway@node2","addresses":{"slw-x-ingress":"10.232.4.9"}}`); got != http.StatusNoContent {
		t.Fatalf("report: status %d", got)
	}
	addrs, err := st.GatewayAddresses(ctx, "slw-x-ingress", time.Now().Add(-time.Minute))
	if err != nil || len(addrs) != 1 || addrs[0].Address != "10.232.4.9" {
		t.Fatalf("stored addresses %v %v", addrs, err)
	}
	if got := put(`{"gateway":"slipway-gateway@node2","addresses":{"slw-x-ingress":"10.232.4.9; rm"}}`); got != http.StatusBadRequest {
		t.Fatalf("invalid address: status %d, want 400", got)
	}
}

// TestStart_PublishesRequestedNetworks lists the networks deployments
// asked the gateways to join in the table, and drops a request once it
// expires (the feed deletes it, moving the version).
func TestStart_PublishesRequestedNetworks(t *testing.T) {
	t.Parallel()
	ctx, st, dir := startOnSocket(t)
	c := socketClient(dir)
	tenant := storetest.NewTenant(t, st, "requests", "notes")
	if err := st.RequestGatewayNetwork(ctx, tenant.Team.ID, tenant.Env.ID, "slw-r-ingress", time.Now().Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	version, err := st.RouteTableVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The table of that version lists the network, and the next one (the
	// expiry's) does not.
	tab := ingress.Table{Version: -1}
	for deadline := time.Now().Add(30 * time.Second); tab.Version < version; {
		if time.Now().After(deadline) {
			t.Fatalf("the feed never published version %d", version)
		}
		if status, next := fetchTable(t, c, tab.Version); status == http.StatusOK {
			tab = next
		}
	}
	if len(tab.Networks) != 1 || tab.Networks[0] != "slw-r-ingress" {
		t.Fatalf("table %d lists networks %v, want the requested one", tab.Version, tab.Networks)
	}
	requested := tab.Version
	for deadline := time.Now().Add(30 * time.Second); tab.Version == requested; {
		if time.Now().After(deadline) {
			t.Fatal("the expired request was never dropped from the table")
		}
		if status, next := fetchTable(t, c, tab.Version); status == http.StatusOK {
			tab = next
		}
	}
	if len(tab.Networks) != 0 {
		t.Fatalf("table %d after the request expired lists %v", tab.Version, tab.Networks)
	}
	if names, _, err := st.RequestedGatewayNetworks(ctx); err != nil || len(names) != 0 {
		t.Fatalf("requests left: %v %v", names, err)
	}
}

// TestStart_AnswersStoppingAgents tells a stopping agent to remove its
// gateway only when its node is no longer labelled for ingress, and then
// forgets the gateway's reports; a feed that cannot read nodes keeps every
// gateway.
func TestStart_AnswersStoppingAgents(t *testing.T) {
	t.Parallel()
	labelled := map[string]bool{"node2": true}
	ingressNode := func(_ context.Context, id string) (bool, error) { return labelled[id], nil }
	ctx, st, dir := startFeed(t, gatewayfeed.TCP{IngressNode: ingressNode})
	c := socketClient(dir)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range []string{"gw@node2", "gw@node3"} {
		must(st.ReportGateway(ctx, store.GatewayReport{Gateway: g}))
		must(st.ReportGatewayAddresses(ctx, g, map[string]string{"slw-l-ingress": "10.0.3.1"}))
	}
	ask := func(c *http.Client, gateway, node string) ingress.LeaveAnswer {
		t.Helper()
		resp, err := c.Post("http://gateway"+ingress.LeavePath, "application/json",
			strings.NewReader(fmt.Sprintf(`{"gateway":%q,"node":%q}`, gateway, node)))
		must(err)
		defer resp.Body.Close()
		var ans ingress.LeaveAnswer
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("leave %s: status %d", node, resp.StatusCode)
		}
		must(json.NewDecoder(resp.Body).Decode(&ans))
		return ans
	}
	live := func() []string {
		reports, err := st.ListGatewayReports(ctx, time.Now().Add(-time.Hour))
		must(err)
		var names []string
		for _, r := range reports {
			names = append(names, r.Gateway)
		}
		return names
	}
	if ans := ask(c, "gw@node2", "node2"); ans.Remove {
		t.Fatal("an ingress node's agent was told to remove its gateway")
	}
	if ans := ask(c, "gw@node3", "node3"); !ans.Remove {
		t.Fatal("the agent of a node without the label was told to keep its gateway")
	}
	if got := live(); len(got) != 1 || got[0] != "gw@node2" {
		t.Fatalf("gateways reporting after node 3's left: %v", got)
	}
	if addrs, err := st.GatewayAddresses(ctx, "slw-l-ingress", time.Now().Add(-time.Hour)); err != nil || len(addrs) != 1 || addrs[0].Gateway != "gw@node2" {
		t.Fatalf("addresses after node 3's left: %+v %v", addrs, err)
	}
	// A feed that cannot read nodes (no manager, one node) keeps them.
	_, _, plain := startOnSocket(t)
	if ans := ask(socketClient(plain), "gw@node3", "node3"); ans.Remove {
		t.Fatal("a feed that cannot read nodes told an agent to remove its gateway")
	}
}

// fetchTable long-polls the feed for a table newer than after.
func fetchTable(t *testing.T, c *http.Client, after int64) (int, ingress.Table) {
	t.Helper()
	resp, err := c.Get(fmt.Sprintf("http://gateway%s?after=%d", ingress.RoutesPath, after))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tab ingress.Table
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&tab); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, tab
}

// socketClient sends its requests to the feed's socket in dir.
// startOnSocket starts the feed on a socket only (no TCP, no keyring) over
// a fresh schema, stopped when the test ends.
func startOnSocket(t *testing.T) (context.Context, *store.Store, string) {
	t.Helper()
	return startFeed(t, gatewayfeed.TCP{})
}

// startFeed is startOnSocket with tcp's node reader (tcp.Addr empty).
func startFeed(t *testing.T, tcp gatewayfeed.TCP) (context.Context, *store.Store, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st := storetest.NewSchema(t)
	dir := filepath.Join(t.TempDir(), "gateway")
	if _, err := gatewayfeed.Start(ctx, st, nil, dir, tcp, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	return ctx, st, dir
}

func socketClient(dir string) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", filepath.Join(dir, gatewayfeed.SocketName))
	}}}
}
