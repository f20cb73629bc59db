package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// newFeedFixture creates in st the tenant team (application notes) whose
// production environment stores a public route from host to port of its
// web service, and a temporary directory for the feed's and gateways'
// files, removed at the end: under os.TempDir, whose short path leaves
// room for unix socket names.
func newFeedFixture(t *testing.T, st *store.Store, team, host string, port int) (storetest.Tenant, string) {
	t.Helper()
	tenant := storetest.NewTenant(t, st, team, "notes")
	if err := st.SetEnvironmentRoutes(context.Background(), tenant.Team.ID, tenant.Env.ID, []store.DeployedRoute{
		{Hostname: host, Visibility: "public", Service: "web", BackendService: "web", BackendPort: port},
	}); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", team)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return tenant, dir
}

// writeTokenFile writes token, newline-ended as an operator's file is, to
// dir/name.token and returns its path.
func writeTokenFile(t *testing.T, dir, name, token string) string {
	t.Helper()
	file := filepath.Join(dir, name+".token")
	if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}
