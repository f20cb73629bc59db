package pipeline_test

import (
	"context"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/pipeline"

	"github.com/slipwayhq/slipway/pipeline/pipelinetest"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/tracing"
	"github.com/slipwayhq/slipway/tracing/tracingtest"
)

// TestPipeline_TelemetryMountFollowsGrant deploys a telemetry receiver on
// the real Swarm: without the grant it runs without the socket directory
// and the deployment warns telemetry_not_granted; granted, a reconcile
// mounts the directory at /run/slipway/telemetry and runs it as the
// daemon's user. The deployment's steps are exported as OTLP spans.
func TestPipeline_TelemetryMountFollowsGrant(t *testing.T) {
	// Not parallel: it installs the global tracer provider.
	b := pipelinetest.Setup(t, "production")
	b.Pipeline.Telemetry = pipeline.TelemetryHost{Root: t.TempDir(), User: "0:0"}
	web, job := swarmtest.Image(t, "web"), swarmtest.Image(t, "job")
	rc := tracingtest.New(t)
	shutdown, err := tracing.Start(context.Background(), tracing.Config{Endpoint: rc.URL, ServiceName: "slipway-test"})
	must(t, err)
	t.Cleanup(func() { _ = shutdown(context.Background()) })

	m := strings.Replace(pipelinetest.WebManifest(b.App.Name, web, job, ""), `command = ["/app", "--sleep", "3600"]`,
		"command = [\"/app\", \"--sleep\", \"3600\"]\nreceives_telemetry = true", 1)
	d := b.Deploy(t, m)
	pipelinetest.ExpectState(t, d, store.StateSucceeded)
	if mounts := b.Services(t)["worker"].Spec.TaskTemplate.ContainerSpec.Mounts; len(mounts) != 0 {
		t.Fatalf("ungranted receiver has mounts %+v", mounts)
	}
	events, err := b.Store.ListEvents(context.Background(), b.Team.ID, store.EventFilter{ObjectType: "deployment", ObjectID: d.ID})
	must(t, err)
	warned := false
	for _, e := range events {
		warned = warned || (e.Verb == "deployment.warning" && strings.Contains(string(e.Details), pipeline.CodeTelemetryNotGranted))
	}
	if !warned {
		t.Fatalf("no telemetry_not_granted warning among %d events", len(events))
	}

	must(t, b.Store.SetEnvironmentTelemetry(context.Background(), b.Team.ID, b.Env.ID, true))
	if _, err := b.Pipeline.Reconcile(context.Background(), b.Team.ID, d.ID); err != nil {
		t.Fatal(err)
	}
	spec := b.Services(t)["worker"].Spec.TaskTemplate.ContainerSpec
	if len(spec.Mounts) != 1 || spec.Mounts[0].Target != swarm.TelemetryPath || !strings.HasPrefix(spec.Mounts[0].Source, b.Pipeline.Telemetry.Root) || spec.User != "0:0" {
		t.Fatalf("granted receiver: mounts %+v user %q", spec.Mounts, spec.User)
	}
	if mounts := b.Services(t)["web"].Spec.TaskTemplate.ContainerSpec.Mounts; len(mounts) != 0 {
		t.Fatalf("web, not a receiver, has mounts %+v", mounts)
	}

	must(t, shutdown(context.Background()))
	var root string
	steps := map[string]bool{}
	for _, s := range rc.Spans() {
		if s.Name == "deployment" && tracingtest.Attr(s, "slipway.deployment.id") == d.ID {
			root = string(s.SpanId)
		}
	}
	for _, s := range rc.Spans() {
		if root != "" && string(s.ParentSpanId) == root {
			steps[s.Name] = true
		}
	}
	for _, want := range []string{"deploy.capture", "deploy.prepare", "deploy.plan", "deploy.rollout:web", "deploy.rollout:worker"} {
		if !steps[want] {
			t.Errorf("no span %s under deployment %s (root found: %v, steps %v)", want, d.ID, root != "", steps)
		}
	}
}
