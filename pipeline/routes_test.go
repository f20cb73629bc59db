package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

func TestDeployedRoutes_EffectiveVisibility(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		kind        store.EnvironmentKind
		envSetting  string // store.Environment.Visibility
		block       string // [spec.environments.production] / [spec.previews] visibility
		route, want string
	}{
		{"public route, default ceiling", store.KindEnvironment, "", "", "public", "public"},
		{"route defaults to private", store.KindEnvironment, "", "", "", "private"},
		{"environment ceiling private", store.KindEnvironment, "private", "", "public", "private"},
		{"manifest block ceiling private", store.KindEnvironment, "", "private", "public", "private"},
		{"previews default to private", store.KindPreview, "", "", "public", "private"},
		{"previews opened up", store.KindPreview, "", "public", "public", "public"},
	}
	for _, c := range cases {
		env := store.Environment{ID: "env_abcdefghijklmnop", ApplicationID: "app_1", Name: "production", Kind: c.kind, Visibility: c.envSetting}
		m := &manifest.Manifest{}
		m.Spec.Routes = []manifest.Route{{Hostname: "Web.Example.com", Service: "web", Port: 8080, Visibility: c.route}}
		if c.block != "" {
			if c.kind == store.KindPreview {
				m.Spec.Previews = &manifest.Previews{Visibility: c.block}
			} else {
				m.Spec.Environments = map[string]manifest.EnvironmentBlock{"production": {Visibility: c.block}}
			}
		}
		got := pipeline.DeployedRoutes(store.Deployment{ID: "dep_1", TeamID: "team_1"}, env, m)
		if len(got) != 1 || got[0].Visibility != c.want {
			t.Errorf("%s: visibility = %+v, want %s", c.name, got, c.want)
		}
	}
	env := store.Environment{ID: "env_abcdefghijklmnop", ApplicationID: "app_1", Name: "production", Kind: store.KindEnvironment}
	m := &manifest.Manifest{}
	no := false
	m.Spec.Routes = []manifest.Route{
		{Hostname: "Web.Example.com.", Service: "web", Port: 8080},
		{Hostname: "old.example.com", Redirect: &manifest.Redirect{To: "https://web.example.com", Status: 301, PreservePath: &no}},
		{Hostname: "keep.example.com", Redirect: &manifest.Redirect{To: "https://web.example.com"}},
	}
	got := pipeline.DeployedRoutes(store.Deployment{ID: "dep_1", TeamID: "team_1"}, env, m)
	short := store.ShortID(env.ID)
	if r := got[0]; r.Hostname != "web.example.com" || r.BackendService != swarm.ServiceName(short, "web") ||
		r.BackendNetwork != swarm.IngressNetworkName(short) || r.BackendPort != 8080 || r.RedirectTo != "" {
		t.Errorf("backend route = %+v", r)
	}
	if r := got[1]; r.RedirectTo != "https://web.example.com" || r.RedirectStatus != 301 || r.PreservePath || r.BackendService != "" {
		t.Errorf("redirect route = %+v", r)
	}
	if !got[2].PreservePath {
		t.Errorf("preserve_path must default to true: %+v", got[2])
	}
}

type fakeConnector struct {
	networks     []string
	disconnected []string
	err          error
}

func (f *fakeConnector) DisconnectNetwork(_ context.Context, network string) error {
	f.disconnected = append(f.disconnected, network)
	return nil
}

func (f *fakeConnector) ConnectNetwork(_ context.Context, network string) (string, error) {
	f.networks = append(f.networks, network)
	return "10.0.9.2", f.err
}

func TestGatewayRoutes_WithdrawActivateConnect(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	tenant := storetest.NewTenant(t, st, "routes-hook", "notes")
	team, env := tenant.Team, tenant.Env
	conn := &fakeConnector{}
	hook := &pipeline.GatewayRoutes{Store: st, Gateway: conn}
	rendered := func(routes ...manifest.Route) []byte {
		m := manifest.Manifest{}
		m.Spec.Routes = routes
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	hosts := func() map[string]string {
		rs, err := st.ListEnvironmentRoutes(ctx, team.ID, env.ID)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, r := range rs {
			out[r.Hostname] = r.DeploymentID + ":" + r.BackendService
		}
		return out
	}
	d1 := store.Deployment{ID: "dep_1", TeamID: team.ID}
	first := rendered(
		manifest.Route{Hostname: "a.example.com", Service: "web", Port: 8080, Visibility: "public"},
		manifest.Route{Hostname: "b.example.com", Service: "web", Port: 8080})
	if err := hook.Activate(ctx, d1, env, first); err != nil {
		t.Fatal(err)
	}
	if h := hosts(); len(h) != 2 {
		t.Fatalf("after activate: %v", h)
	}

	// The next deployment drops b and moves a to another service: Withdraw
	// removes only b; a keeps its old backend until Activate.
	d2 := store.Deployment{ID: "dep_2", TeamID: team.ID}
	second := rendered(manifest.Route{Hostname: "a.example.com", Service: "api", Port: 8080, Visibility: "public"})
	if err := hook.Withdraw(ctx, d2, env, second); err != nil {
		t.Fatal(err)
	}
	short := store.ShortID(env.ID)
	if h := hosts(); len(h) != 1 || h["a.example.com"] != "dep_1:"+swarm.ServiceName(short, "web") {
		t.Fatalf("after withdraw: %v", h)
	}
	if err := hook.Activate(ctx, d2, env, second); err != nil {
		t.Fatal(err)
	}
	if h := hosts(); len(h) != 1 || h["a.example.com"] != "dep_2:"+swarm.ServiceName(short, "api") {
		t.Fatalf("after second activate: %v", h)
	}

	// Withdraw checks hostname ownership before anything rolls out: a name
	// another team reserved fails the deployment and changes nothing.
	rivalTenant := storetest.NewTenant(t, st, "routes-hook-rival", "rival")
	rival, rivalEnv := rivalTenant.Team, rivalTenant.Env
	if err := st.SetEnvironmentHostnames(ctx, rival.ID, rivalEnv.ID, []string{"taken.example.com"}); err != nil {
		t.Fatal(err)
	}
	third := rendered(
		manifest.Route{Hostname: "a.example.com", Service: "api", Port: 8080},
		manifest.Route{Hostname: "taken.example.com", Service: "api", Port: 8080})
	var f *pipeline.Failure
	if err := hook.Withdraw(ctx, store.Deployment{ID: "dep_3", TeamID: team.ID}, env, third); !errors.As(err, &f) || f.Code != "hostname_conflict" {
		t.Fatalf("withdraw with a taken hostname = %v", err)
	}
	if h := hosts(); len(h) != 1 || h["a.example.com"] != "dep_2:"+swarm.ServiceName(short, "api") {
		t.Fatalf("after refused withdraw: %v", h)
	}
	if !strings.Contains(f.Message, "belongs to another application") || strings.Contains(f.Message, "rival") {
		t.Fatalf("another team's hostname: %q, want it unnamed", f.Message)
	}
	// Another environment of the same application rendering the same
	// hostname is told so, and how to give each its own: it is not
	// "another application".
	staging, err := st.CreateEnvironment(ctx, team.ID, store.EnvironmentParams{ApplicationID: tenant.App.ID, Kind: store.KindEnvironment, Name: "staging", Slug: "staging"})
	if err != nil {
		t.Fatal(err)
	}
	if err := hook.Withdraw(ctx, store.Deployment{ID: "dep_4", TeamID: team.ID}, staging, second); !errors.As(err, &f) || f.Code != "hostname_conflict" ||
		!strings.Contains(f.Message, "served by "+env.Name+", another environment of this application") || !strings.Contains(f.Message, "[spec.environments.staging.variables]") {
		t.Fatalf("same application's hostname = %v", err)
	}

	proxies, err := hook.Connect(ctx, env, "slw-x-ingress")
	if err != nil || proxies != "10.0.9.2" || len(conn.networks) != 1 || conn.networks[0] != "slw-x-ingress" {
		t.Fatalf("connect = %q, %v (networks %v)", proxies, err, conn.networks)
	}
	if err := hook.Release(ctx, env); err != nil {
		t.Fatal(err)
	}
	if h := hosts(); len(h) != 0 || len(conn.disconnected) != 1 || conn.disconnected[0] != swarm.IngressNetworkName(short) {
		t.Fatalf("after release: routes %v, disconnected %v", h, conn.disconnected)
	}
	conn.err = errors.New("no such container")
	if _, err := hook.Connect(ctx, env, "slw-x-ingress"); !errors.As(err, &f) || f.Code != pipeline.CodeGatewayUnavailable {
		t.Fatalf("connect without a gateway = %v", err)
	}
}
