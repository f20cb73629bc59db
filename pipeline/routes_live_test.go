package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/routelive"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// TestGatewayRoutes_ActivateWaitsUntilTheGatewayServesTheRoutes: with
// WaitLive, the routes step does not end while the gateway serves an older
// table or has no backend answering for a new route; it ends once the
// gateway reports both, and with a *routelive.NotLiveError (the
// deployment's warning) when its bound passes first.
func TestGatewayRoutes_ActivateWaitsUntilTheGatewayServesTheRoutes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Gateway reports span teams: a schema of the test's own.
	st := storetest.NewSchema(t)
	tenant := storetest.NewTenant(t, st, "routes-live", "notes")
	team, env := tenant.Team, tenant.Env
	hook := &pipeline.GatewayRoutes{Store: st, Gateway: &fakeConnector{}, WaitLive: true, LiveBound: time.Minute}
	rendered := func(routes ...manifest.Route) []byte {
		m := manifest.Manifest{}
		m.Spec.Routes = routes
		b, err := json.Marshal(m)
		must(t, err)
		return b
	}
	report := func(version int64, live ...string) {
		t.Helper()
		must(t, st.ReportGateway(ctx, store.GatewayReport{Gateway: "gw-1", TableVersion: version, Live: live}))
	}
	before, err := st.RouteTableVersion(ctx)
	must(t, err)
	report(before)

	done := make(chan error, 1)
	go func() {
		done <- hook.Activate(ctx, store.Deployment{ID: "dep_1", TeamID: team.ID}, env, rendered(
			manifest.Route{Hostname: "web.live.example.com", Service: "web", Port: 8080, Visibility: "public"},
			manifest.Route{Hostname: "old.live.example.com", Redirect: &manifest.Redirect{To: "https://web.live.example.com"}}))
	}()
	// The routes are set first.
	var version int64
	for deadline := time.Now().Add(30 * time.Second); version <= before; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the routes were never set")
		}
		version, err = st.RouteTableVersion(ctx)
		must(t, err)
	}
	stillWaiting := func(why string) {
		t.Helper()
		select {
		case err := <-done:
			t.Fatalf("Activate returned %v while %s", err, why)
		case <-time.After(time.Second):
		}
	}
	stillWaiting("the gateway served the older table")
	report(version, "old.live.example.com")
	stillWaiting("no backend answered for web.live.example.com")
	report(version, "old.live.example.com", "web.live.example.com")
	if err := <-done; err != nil {
		t.Fatalf("Activate once the gateway serves both routes: %v", err)
	}

	// A new route the gateway never gets to: the bound ends the wait, and
	// the routes are set all the same.
	hook.LiveBound = 500 * time.Millisecond
	err = hook.Activate(ctx, store.Deployment{ID: "dep_2", TeamID: team.ID}, env, rendered(
		manifest.Route{Hostname: "new.live.example.com", Service: "web", Port: 8080, Visibility: "public"}))
	var notLive *routelive.NotLiveError
	if !errors.As(err, &notLive) || !strings.Contains(err.Error(), "new.live.example.com") {
		t.Fatalf("err = %v, want a NotLiveError for new.live.example.com", err)
	}
	routes, err := st.ListEnvironmentRoutes(ctx, team.ID, env.ID)
	must(t, err)
	if len(routes) != 1 || routes[0].Hostname != "new.live.example.com" {
		t.Fatalf("routes after the bound: %+v", routes)
	}
}

// TestDeploymentWarnings_RoutesStep: a warning left on the routes step
// (routes not live) is listed with the capture step's.
func TestDeploymentWarnings_RoutesStep(t *testing.T) {
	t.Parallel()
	p := pipeline.Progress{Steps: []pipeline.Step{
		{Name: "capture", Detail: map[string]string{"warning:spec.imports[0]": "import_unconnected: a"}},
		{Name: "routes", Detail: map[string]string{"warning:spec.routes": pipeline.CodeRoutesNotLive + ": b"}},
	}}
	got := pipeline.DeploymentWarnings(store.Deployment{Steps: p.JSON()})
	want := []string{"spec.imports[0]: import_unconnected: a", "spec.routes: routes_not_live: b"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("warnings = %q, want %q", got, want)
	}
}

// TestNodeGateways_JoinAsksAndWaitsForEveryLiveGateway: a deployment's Join
// asks the ingress nodes' gateways to join the environment's network (the
// route table lists it) and returns once every live gateway reported its
// address there; one that does not in time is named in a
// *routelive.NotJoinedError that comes with the others' addresses. The
// request ends when the deployment sets its routes, and when the
// environment is released.
func TestNodeGateways_JoinAsksAndWaitsForEveryLiveGateway(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Gateway reports span teams: a schema of the test's own.
	st := storetest.NewSchema(t)
	tenant := storetest.NewTenant(t, st, "node-gateways", "notes")
	team, env := tenant.Team, tenant.Env
	const network = "slw-ng-ingress"
	hook := &pipeline.GatewayRoutes{Store: st, Gateway: pipeline.NodeGateways{Store: st, JoinBound: time.Minute}}
	for _, g := range []string{"gw@node2", "gw@node3"} {
		must(t, st.ReportGateway(ctx, store.GatewayReport{Gateway: g}))
	}
	requested := func() []string {
		names, _, err := st.RequestedGatewayNetworks(ctx)
		if err != nil {
			t.Error(err)
		}
		return names
	}

	// The agents: each joins once the table lists the network.
	joined := make(chan struct{})
	go func() {
		defer close(joined)
		for deadline := time.Now().Add(30 * time.Second); !slices.Contains(requested(), network); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Error("the network was never requested")
				return
			}
		}
		for g, ip := range map[string]string{"gw@node2": "10.0.7.2", "gw@node3": "10.0.7.3"} {
			if err := st.ReportGatewayAddresses(ctx, g, map[string]string{network: ip}); err != nil {
				t.Error(err)
			}
		}
	}()
	proxies, err := hook.Join(ctx, env, network)
	<-joined
	if err != nil || proxies != "10.0.7.2,10.0.7.3" {
		t.Fatalf("Join = %q, %v; want both gateways' addresses", proxies, err)
	}
	// A drift repair reads the same without asking.
	if got, err := hook.Connect(ctx, env, network); err != nil || got != proxies {
		t.Fatalf("Connect = %q, %v", got, err)
	}

	// Setting the routes ends the request: they hold the network now.
	rendered := manifest.Manifest{}
	rendered.Spec.Routes = []manifest.Route{{Hostname: "ng.example.com", Service: "web", Port: 8080}}
	b, err := json.Marshal(rendered)
	must(t, err)
	must(t, hook.Activate(ctx, store.Deployment{ID: "dep_1", TeamID: team.ID}, env, b))
	if got := requested(); len(got) != 0 {
		t.Fatalf("requests after the routes were set: %v", got)
	}

	// A gateway that never joins: the bound passes, the others' addresses
	// come with the error naming it.
	must(t, st.ReportGateway(ctx, store.GatewayReport{Gateway: "gw@node4"}))
	hook.Gateway = pipeline.NodeGateways{Store: st, JoinBound: 300 * time.Millisecond}
	proxies, err = hook.Join(ctx, env, network)
	var notJoined *routelive.NotJoinedError
	if !errors.As(err, &notJoined) || !slices.Equal(notJoined.Missing, []string{"gw@node4"}) || !strings.Contains(err.Error(), network) {
		t.Fatalf("Join with gw@node4 silent: %q, %v; want a NotJoinedError naming it", proxies, err)
	}
	if proxies != "10.0.7.2,10.0.7.3" {
		t.Fatalf("proxies %q with gw@node4 silent, want the two others", proxies)
	}
	if got := requested(); !slices.Equal(got, []string{network}) {
		t.Fatalf("requests %v, want %s until the routes are set", got, network)
	}
	must(t, hook.Release(ctx, env))
	if got := requested(); len(got) != 0 {
		t.Fatalf("requests after the environment was released: %v", got)
	}
}
