package pipeline_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/pipeline/pipelinetest"
	"github.com/slipwayhq/slipway/quota"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
)

// TestPipeline_QuotaRefusesBeforeAnythingRuns: whatever requested it, a
// deployment whose rendered manifest would take the team past its CPU
// quota fails at capture with quota_exceeded naming the quota, its limit
// and the use, and creates nothing on the Swarm; within the quota the
// same deployment runs, with the manifest's resources reserved.
func TestPipeline_QuotaRefusesBeforeAnythingRuns(t *testing.T) {
	t.Parallel()
	b := pipelinetest.Setup(t, "production")
	ctx := context.Background()
	must(t, b.Store.SetTeamQuotas(ctx, b.Team.ID, quota.Row(map[quota.Name]int64{quota.CPUMillis: 400})))
	doc := fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q
[[spec.services]]
name = "web"
replicas = 2
[spec.services.source]
type = "image"
image = %q
[spec.services.resources]
cpu_millis = 250
memory_bytes = 33554432
`, b.App.Name, swarmtest.Image(t, "web"))
	d := b.Deploy(t, doc)
	pipelinetest.ExpectState(t, d, store.StateFailed)
	if d.ErrorCode != quota.Code {
		t.Fatalf("deployment failed with %s (%s), want %s", d.ErrorCode, d.ErrorMessage, quota.Code)
	}
	for _, want := range []string{"cpu_millis", "400 millicores", "500 millicores"} {
		if !strings.Contains(d.ErrorMessage, want) {
			t.Errorf("error %q does not name %q", d.ErrorMessage, want)
		}
	}
	if svcs := b.ServicesOf(t, b.Env.ID); len(svcs) != 0 {
		t.Fatalf("a refused deployment created %d services", len(svcs))
	}

	must(t, b.Store.SetTeamQuotas(ctx, b.Team.ID, quota.Row(map[quota.Name]int64{quota.CPUMillis: 500})))
	d = b.Deploy(t, doc)
	pipelinetest.ExpectState(t, d, store.StateSucceeded)
	svcs := b.ServicesOf(t, b.Env.ID)
	if len(svcs) != 1 {
		t.Fatalf("%d services, want web", len(svcs))
	}
	if r := svcs[0].Spec.TaskTemplate.Resources; r == nil || r.Reservations == nil || r.Reservations.NanoCPUs != 250e6 || r.Reservations.MemoryBytes != 32<<20 {
		t.Fatalf("web's resources %+v, want 250 millicores and 32 MiB reserved", r)
	}
	use, err := quota.Measure(ctx, b.Store, b.Team.ID)
	must(t, err)
	if use[quota.CPUMillis] != 500 || use[quota.Replicas] != 2 {
		t.Fatalf("use after the deployment %v, want 500 millicores on 2 replicas", use)
	}
}
