package store_test

import (
	"errors"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

func TestRoutes_SetReplaceDeleteAndVersion(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, st, a := b.ctx, b.st, b.a
	id := randomHex(t)
	web := store.DeployedRoute{DeploymentID: "dep_1", Hostname: "Web-" + id + ".example.com.", Visibility: "public",
		BackendService: "slw-x-web", BackendPort: 8080, BackendNetwork: "slw-x-ingress"}
	old := store.DeployedRoute{DeploymentID: "dep_1", Hostname: "old-" + id + ".example.com", Visibility: "private",
		RedirectTo: "https://example.com", RedirectStatus: 301, PreservePath: true}

	v0, err := st.RouteTableVersion(ctx)
	must(t, err)
	must(t, st.SetEnvironmentRoutes(ctx, a.team.ID, a.env.ID, []store.DeployedRoute{web, old}))
	v1, routes, err := st.RouteTable(ctx)
	must(t, err)
	if v1 <= v0 {
		t.Fatalf("version after set = %d, want > %d", v1, v0)
	}
	mine := onlyEnv(routes, a.env.ID)
	if len(mine) != 2 || mine[0].Hostname != "old-"+id+".example.com" || mine[1].Hostname != "web-"+id+".example.com" {
		t.Fatalf("routes = %+v", mine)
	}
	if r := mine[0]; r.RedirectTo != "https://example.com" || r.RedirectStatus != 301 || !r.PreservePath || r.Visibility != "private" || r.ApplicationID != a.app.ID {
		t.Fatalf("redirect route = %+v", r)
	}
	if r := mine[1]; r.BackendService != "slw-x-web" || r.BackendPort != 8080 || r.BackendNetwork != "slw-x-ingress" || r.TeamID != a.team.ID {
		t.Fatalf("backend route = %+v", r)
	}

	// The same routes from a new deployment change nothing the gateway
	// serves, so the version stays.
	web.DeploymentID, old.DeploymentID = "dep_2", "dep_2"
	must(t, st.SetEnvironmentRoutes(ctx, a.team.ID, a.env.ID, []store.DeployedRoute{web, old}))
	if v, _ := st.RouteTableVersion(ctx); v != v1 {
		t.Fatalf("version after identical set = %d, want %d", v, v1)
	}

	// Replacing drops the absent route and bumps the version.
	must(t, st.SetEnvironmentRoutes(ctx, a.team.ID, a.env.ID, []store.DeployedRoute{web}))
	v2, err := st.RouteTableVersion(ctx)
	must(t, err)
	if v2 <= v1 {
		t.Fatalf("version after replace = %d, want > %d", v2, v1)
	}
	got, err := st.ListEnvironmentRoutes(ctx, a.team.ID, a.env.ID)
	must(t, err)
	if len(got) != 1 || got[0].DeploymentID != "dep_2" {
		t.Fatalf("routes after replace = %+v", got)
	}

	n, err := st.DeleteEnvironmentRoutes(ctx, a.team.ID, a.env.ID)
	must(t, err)
	v3, err := st.RouteTableVersion(ctx)
	must(t, err)
	if n != 1 || v3 <= v2 {
		t.Fatalf("delete = %d rows, version %d (was %d)", n, v3, v2)
	}

	// Deleting the environment cascades its routes away and moves the version too.
	must(t, st.SetEnvironmentRoutes(ctx, a.team.ID, a.env.ID, []store.DeployedRoute{web}))
	v4, _ := st.RouteTableVersion(ctx)
	must(t, st.DeleteEnvironment(ctx, a.team.ID, a.env.ID))
	v5, routes, err := st.RouteTable(ctx)
	must(t, err)
	if v5 <= v4 || len(onlyEnv(routes, a.env.ID)) != 0 {
		t.Fatalf("after environment delete: version %d (was %d), routes %+v", v5, v4, onlyEnv(routes, a.env.ID))
	}
}

func TestRoutes_TeamScopedAndConflicts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, st, a, other := b.ctx, b.st, b.a, b.b
	host := "shared-" + randomHex(t) + ".example.com"
	route := store.DeployedRoute{Hostname: host, Visibility: "public", BackendService: "svc", BackendPort: 80}
	must(t, st.SetEnvironmentRoutes(ctx, other.team.ID, other.env.ID, []store.DeployedRoute{route}))

	// Team A cannot reach team B's environment at all.
	wantErr(t, st.SetEnvironmentRoutes(ctx, a.team.ID, other.env.ID, nil), store.ErrNotFound)
	if n, err := st.DeleteEnvironmentRoutes(ctx, a.team.ID, other.env.ID); err != nil || n != 0 {
		t.Fatalf("delete across teams = %d, %v", n, err)
	}
	if rs, err := st.ListEnvironmentRoutes(ctx, a.team.ID, other.env.ID); err != nil || len(rs) != 0 {
		t.Fatalf("list across teams = %+v, %v", rs, err)
	}

	// A hostname another team serves is a conflict and changes nothing.
	mine := store.DeployedRoute{Hostname: "mine-" + randomHex(t) + ".example.com", Visibility: "public", BackendService: "svc", BackendPort: 80}
	err := st.SetEnvironmentRoutes(ctx, a.team.ID, a.env.ID, []store.DeployedRoute{mine, route})
	var c *store.ConflictError
	if !errors.As(err, &c) || c.Code != "hostname_conflict" || c.Value != host {
		t.Fatalf("conflict = %v", err)
	}
	if rs, _ := st.ListEnvironmentRoutes(ctx, a.team.ID, a.env.ID); len(rs) != 0 {
		t.Fatalf("a conflicting set left routes: %+v", rs)
	}
	rs, err := st.ListEnvironmentRoutes(ctx, other.team.ID, other.env.ID)
	must(t, err)
	if len(rs) != 1 || rs[0].EnvironmentID != other.env.ID {
		t.Fatalf("owner's routes = %+v", rs)
	}

	// A route needs exactly one target.
	bad := store.DeployedRoute{Hostname: "bad-" + randomHex(t) + ".example.com", Visibility: "public"}
	wantErr(t, st.SetEnvironmentRoutes(ctx, a.team.ID, a.env.ID, []store.DeployedRoute{bad}), store.ErrInvalid)
}

func onlyEnv(rs []store.DeployedRoute, envID string) []store.DeployedRoute {
	var out []store.DeployedRoute
	for _, r := range rs {
		if r.EnvironmentID == envID {
			out = append(out, r)
		}
	}
	return out
}

func init() {
	for _, m := range []string{"SetEnvironmentRoutes", "DeleteEnvironmentRoutes", "ListEnvironmentRoutes"} {
		tenancyCovered[m] = "TestRoutes_TeamScopedAndConflicts"
	}
}

// randomHex keeps hostnames apart between parallel tests: deployed
// hostnames are unique across the whole database.
func randomHex(t *testing.T) string {
	tok, _ := secret(t)
	return tok[:12]
}
