package chaos

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/app/api/client"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/test/chaos/chaostest"
	"github.com/slipwayhq/slipway/test/summary"
)

// outage is how long the control plane stays down.
const outage = 60 * time.Second

// routedApp is an application with one web service behind a public route.
func routedApp(name, image, host string) []byte {
	return fmt.Appendf(nil, `api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[[spec.services]]
name = "web"
replicas = 2
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
`, name, image, host)
}

// deployRouted applies and deploys a routed application through the API
// and waits for it to succeed; envs removes the environment when the test
// ends.
func deployRouted(t *testing.T, c *client.Client, envs *chaostest.EnvironmentCleanup, name, image, host string) {
	t.Helper()
	res, err := c.Apply(context.Background(), routedApp(name, image, host), client.ApplyOptions{Deploy: true})
	if err != nil {
		t.Fatal(err)
	}
	dep := res.Deployments[0]
	envs.Add(dep.EnvironmentID)
	if state, code, msg := chaostest.WaitDeployment(t, c, dep.ID, 4*time.Minute); state != string(store.StateSucceeded) {
		t.Fatalf("deploy %s: %s %s %s", name, state, code, msg)
	}
}

// TestGatewayServesWhileControlPlaneDown deploys a routed application,
// then kills serve and worker with SIGKILL and sends requests through the
// gateway for a whole minute: every one must succeed. With serve back, a
// newly deployed route appears on the same gateway.
func TestGatewayServesWhileControlPlaneDown(t *testing.T) {
	t.Parallel()
	bin := chaostest.Binary(t)
	url, st := chaostest.Database(t)
	id := swarmtest.ID()
	team := chaostest.NewTeam(t, st, id)
	web := swarmtest.Image(t, "web")
	// Registered first, so it runs after the gateway and the processes
	// are gone.
	envs := chaostest.Environments(t)
	gw := chaostest.StartGateway(t, bin, id)

	srv := chaostest.StartServe(t, bin, url, gw.ServeEnv()...)
	worker := chaostest.StartWorker(t, bin, url, "worker", gw.ServeEnv()...)
	c := team.Client(t, srv)
	hostA := "before-" + id + ".test"
	deployRouted(t, c, envs, "cp-a-"+id, web, hostA)
	gw.WaitServes(t, hostA, time.Minute)

	srv.Kill()
	worker.Kill()
	if _, err := http.Get(srv.URL + "/healthz"); err == nil {
		t.Fatal("serve still answers after SIGKILL")
	}
	var total, failed atomic.Int64
	var mu sync.Mutex
	var firstFailure string
	stop := time.Now().Add(outage)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			// What must not happen is a refusal or an error answer; a
			// request that a machine starved of CPU slows down is not a
			// failure, so the timeout is generous.
			hc := &http.Client{Timeout: 30 * time.Second}
			for time.Now().Before(stop) {
				status, body, err := gw.Get(hc, hostA)
				total.Add(1)
				if err != nil || status/100 != 2 || body != "ok" {
					failed.Add(1)
					mu.Lock()
					if firstFailure == "" {
						firstFailure = fmt.Sprintf("status %d body %q err %v", status, body, err)
					}
					mu.Unlock()
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	if n := total.Load(); n < 500 {
		t.Fatalf("only %d requests in %s: the load did not run", n, outage)
	}
	if f := failed.Load(); f != 0 {
		t.Fatalf("%d of %d requests failed while the control plane was down; first: %s", f, total.Load(), firstFailure)
	}

	srv = chaostest.StartServe(t, bin, url, gw.ServeEnv()...)
	chaostest.StartWorker(t, bin, url, "worker-2", gw.ServeEnv()...)
	c = team.Client(t, srv)
	hostB := "after-" + id + ".test"
	deployRouted(t, c, envs, "cp-b-"+id, web, hostB)
	gw.WaitServes(t, hostB, time.Minute)
	gw.WaitServes(t, hostA, 10*time.Second)
	summary.Fault(t, "control plane down 60 s",
		"the gateway answered %d of %d requests with 200 while serve and worker were killed; a route deployed after serve came back is served", total.Load(), total.Load())
}
