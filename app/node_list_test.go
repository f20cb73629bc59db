package app_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/store/storetest"
)

type nodesRuntime struct{}

func (nodesRuntime) ServiceStatus(context.Context, string) ([]api.ServiceStatus, error) {
	return nil, nil
}
func (nodesRuntime) Nodes(context.Context) ([]api.Node, error) {
	return []api.Node{
		{Hostname: "node1", Role: "manager", Leader: true, Availability: "active", State: "ready", EngineVersion: "20.10.24", CPUs: 2, MemoryBytes: 4 << 30,
			Labels: map[string]string{"dev.slipway.ingress": "true", "dev.slipway.builds": "true"}},
		{Hostname: "node2", Role: "worker", Availability: "drain", State: "ready", EngineVersion: "20.10.24", CPUs: 1, MemoryBytes: 1 << 30},
	}, nil
}

// TestNodesPage: the installation's first user sees the nodes with their
// labels and the nav item; a user of another team sees neither (404).
func TestNodesPage(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	clk := &clock{t: time.Now()}
	b := &testBundle{store: st, clock: clk, app: app.New(app.Config{Store: st, Argon2: auth.TestArgon2, Now: clk.now, Runtime: nodesRuntime{},
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})}
	admin := b.signup(t, "admin@example.com", "Operators")
	other := b.signup(t, "tenant@example.com", "Tenants")

	r := b.sessionBrowser(t, admin.user).get("/nodes")
	wantStatus(t, r, http.StatusOK)
	row := r.doc.Find(`[data-testid="node-row"][data-node="node1"]`)
	if testid(r, "node-row").Length() != 2 || !strings.Contains(row.Find(`[data-testid="node-labels"]`).Text(), "builds=true") ||
		testid(r, "nav-nodes").Length() != 1 {
		t.Fatalf("admin's nodes page: %s", truncate(r.body))
	}
	if got := r.doc.Find(`[data-node="node2"] [data-testid="node-availability"]`).Text(); got != "drain" {
		t.Fatalf("node2 availability %q", got)
	}

	tr := b.sessionBrowser(t, other.user)
	wantStatus(t, tr.get("/nodes"), http.StatusNotFound)
	if r := tr.get("/applications"); testid(r, "nav-nodes").Length() != 0 {
		t.Fatal("a tenant's nav links to the nodes")
	}
}
