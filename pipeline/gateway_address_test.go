package pipeline_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/pipeline"

	"github.com/docker/docker/api/types/container"

	"github.com/slipwayhq/slipway/pipeline/pipelinetest"
	"github.com/slipwayhq/slipway/runtime/ingress"
	"github.com/slipwayhq/slipway/runtime/ingress/gatewayctl"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/test/chaos/chaostest"
)

// TestReconcile_MovesRoutedServicesToTheGatewaysNewAddress: a restarted
// gateway container has a new address on the environment's ingress
// overlay; the next drift repair rolls the routed service onto it
// (SLIPWAY_INGRESS_PROXIES), and the route keeps working through the
// gateway.
func TestReconcile_MovesRoutedServicesToTheGatewaysNewAddress(t *testing.T) {
	t.Parallel()
	b := pipelinetest.Setup(t, "production")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cli := swarmtest.Client(t)
	id := swarmtest.ID()
	// Registered after setupPipeline's cleanup, so the gateway leaves the
	// overlay before the team's networks go.
	gw := chaostest.StartGateway(t, chaostest.Binary(t), id)
	m := gatewayctl.New(cli, nil, gw.Name)
	b.Pipeline.Routes = &pipeline.GatewayRoutes{Store: b.Store, Gateway: m}
	feed := serveRouteFeed(t, gw.SocketDir)

	host := "gwaddr-" + id + ".test"
	d := b.Deploy(t, fmt.Sprintf(`
api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[[spec.services]]
name = "web"
[spec.services.source]
type = "image"
image = %q
[spec.services.healthcheck]
type = "http"
port = 8080
path = "/health"
interval_seconds = 2
timeout_seconds = 2
start_period_seconds = 30
retries = 5

[[spec.routes]]
hostname = %q
service = "web"
port = 8080
visibility = "public"
`, b.App.Name, swarmtest.Image(t, "web"), host))
	pipelinetest.ExpectState(t, d, store.StateSucceeded)
	routes, err := b.Store.ListEnvironmentRoutes(ctx, b.Team.ID, b.Env.ID)
	must(t, err)
	table := ingress.Table{Version: 1}
	for _, r := range routes {
		table.Routes = append(table.Routes, ingress.Route{
			Hostname: r.Hostname, Visibility: ingress.Visibility(r.Visibility),
			Backend: &ingress.Backend{Service: r.BackendService, Port: r.BackendPort, Network: r.BackendNetwork},
		})
	}
	must(t, feed.Publish(table))

	overlay := swarm.IngressNetworkName(store.ShortID(b.Env.ID))
	before := gatewayAddress(t, m, overlay)
	if got := serviceEnv(t, b, "web", swarm.IngressProxiesEnv); got != before {
		t.Fatalf("web was deployed trusting %q, want the gateway's address %s", got, before)
	}
	proxiesURL := gw.URL + "env/" + swarm.IngressProxiesEnv
	waitBody(t, proxiesURL, host, before)

	// Docker gives the container a new address on the overlay when it
	// starts again.
	zero := 0
	must(t, cli.ContainerStop(ctx, gw.Name, container.StopOptions{Timeout: &zero}))
	must(t, cli.ContainerStart(ctx, gw.Name, container.StartOptions{}))
	after := gatewayAddress(t, m, overlay)
	t.Logf("gateway address on %s: %s, after a restart %s", overlay, before, after)
	if after == before {
		t.Fatalf("the restarted gateway kept its address %s: nothing to repair", before)
	}
	if got := serviceEnv(t, b, "web", swarm.IngressProxiesEnv); got != before {
		t.Fatalf("web trusts %q before any repair, want the old %s", got, before)
	}

	repaired, err := b.Pipeline.Reconcile(ctx, b.Team.ID, d.ID)
	must(t, err)
	if len(repaired) != 1 || repaired[0].Service != "web" || len(repaired[0].Drift) != 1 || repaired[0].Drift[0].Field != "environment" {
		t.Fatalf("repaired %+v, want web's environment", repaired)
	}
	if got := serviceEnv(t, b, "web", swarm.IngressProxiesEnv); got != after {
		t.Fatalf("after repair web trusts %q, want the gateway's new address %s", got, after)
	}
	events, err := b.Store.ListEvents(ctx, b.Team.ID, store.EventFilter{ObjectType: "deployment", ObjectID: d.ID})
	must(t, err)
	found := false
	for _, e := range events {
		found = found || e.Verb == "drift.repaired" && strings.Contains(string(e.Details), after)
	}
	if !found {
		t.Errorf("no drift.repaired event names the new address %s", after)
	}
	// The running task answers through the restarted gateway with the new
	// address once the update rolled out.
	waitBody(t, proxiesURL, host, after)
	if repaired, err := b.Pipeline.Reconcile(ctx, b.Team.ID, d.ID); err != nil || len(repaired) != 0 {
		t.Fatalf("a second reconciliation repaired %+v (%v): want nothing", repaired, err)
	}
}

// serveRouteFeed serves the gateway's route feed on dir/gateway.sock, as
// `slipway serve` does, until the test ends.
func serveRouteFeed(t *testing.T, dir string) *ingress.Publisher {
	t.Helper()
	ln, err := net.Listen("unix", filepath.Join(dir, "gateway.sock"))
	must(t, err)
	pub := ingress.NewPublisher()
	pub.Wait = 3 * time.Second
	mux := http.NewServeMux()
	mux.Handle(ingress.RoutesPath, pub)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return pub
}

// gatewayAddress waits for the gateway's address on network.
func gatewayAddress(t *testing.T, m *gatewayctl.Manager, network string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		addrs, err := m.Addresses(context.Background())
		if err == nil && addrs[network] != "" {
			return addrs[network]
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateway has no address on %s: %v %v", network, addrs, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// serviceEnv is the value of key in the environment of the service's spec.
func serviceEnv(t *testing.T, b *pipelinetest.Bundle, service, key string) string {
	t.Helper()
	svc, ok := b.Services(t)[service]
	if !ok {
		t.Fatalf("no service %s", service)
	}
	for _, kv := range svc.Spec.TaskTemplate.ContainerSpec.Env {
		if k, v, _ := strings.Cut(kv, "="); k == key {
			return v
		}
	}
	return ""
}

// waitBody waits until a GET of url with the Host header host answers 200
// with exactly body.
func waitBody(t *testing.T, url, host, body string) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(2 * time.Minute)
	last := ""
	for {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		must(t, err)
		req.Host = host
		if resp, err := c.Do(req); err != nil {
			last = err.Error()
		} else {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && string(b) == body {
				return
			}
			last = fmt.Sprintf("%d %q", resp.StatusCode, b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s (Host %s) never answered %q: last %s", url, host, body, last)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
