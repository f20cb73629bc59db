package tracing_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/slipwayhq/slipway/tracing"
	"github.com/slipwayhq/slipway/tracing/tracingtest"
)

// TestStart_ExportsDeploymentSteps exports a deployment span with two
// step spans to an OTLP receiver and checks what arrives: names, parent,
// the step's own start and end, and the failed step's error status.
func TestStart_ExportsDeploymentSteps(t *testing.T) {
	rc := tracingtest.New(t)
	ctx := context.Background()
	shutdown, err := tracing.Start(ctx, tracing.Config{Endpoint: rc.URL, ServiceName: "slipway-test"})
	if err != nil {
		t.Fatal(err)
	}
	dctx, span := tracing.StartDeployment(ctx, "dep_1", "env_1", "app_1")
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tracing.Step(dctx, "prepare", "succeeded", "", t0, t0.Add(2*time.Second))
	tracing.Step(dctx, "rollout:web", "failed", "convergence_timeout", t0.Add(2*time.Second), t0.Add(5*time.Second))
	tracing.EndDeployment(span, errors.New("rollout failed"))
	if err := shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	if paths := rc.Paths(); len(paths) == 0 || paths[0] != "/v1/traces" {
		t.Fatalf("paths %v, want /v1/traces", paths)
	}
	byName := map[string]*tracepb.Span{}
	for _, s := range rc.Spans() {
		byName[s.Name] = s
	}
	root, prep, roll := byName["deployment"], byName["deploy.prepare"], byName["deploy.rollout:web"]
	if root == nil || prep == nil || roll == nil {
		t.Fatalf("spans %v", rc.Spans())
	}
	if string(prep.ParentSpanId) != string(root.SpanId) || string(roll.TraceId) != string(root.TraceId) {
		t.Fatal("step spans are not children of the deployment span")
	}
	if prep.StartTimeUnixNano != uint64(t0.UnixNano()) || prep.EndTimeUnixNano != uint64(t0.Add(2*time.Second).UnixNano()) {
		t.Fatalf("prepare span %d..%d, want the step's own times", prep.StartTimeUnixNano, prep.EndTimeUnixNano)
	}
	if roll.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || roll.Status.GetMessage() != "convergence_timeout" ||
		root.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || prep.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Fatalf("statuses: root %v prepare %v rollout %v", root.Status, prep.Status, roll.Status)
	}
	if tracingtest.Attr(root, "slipway.deployment.id") != "dep_1" || tracingtest.Attr(root, "slipway.environment.id") != "env_1" {
		t.Fatalf("root attributes %v", root.Attributes)
	}
}

func TestStart_Endpoint(t *testing.T) {
	shutdown, err := tracing.Start(context.Background(), tracing.Config{ServiceName: "x"})
	if err != nil || shutdown(context.Background()) != nil {
		t.Fatalf("no endpoint: %v", err)
	}
	if _, err := tracing.Start(context.Background(), tracing.Config{Endpoint: "collector:4318", ServiceName: "x"}); err == nil {
		t.Fatal("an endpoint without a scheme was accepted")
	}
}

// TestStart_ExportsToReceiverSockets: a telemetry receiver listening on
// otlp.sock in its socket directory gets the spans; a directory without a
// listener does not stop the export.
func TestStart_ExportsToReceiverSockets(t *testing.T) {
	root := t.TempDir()
	for _, dir := range []string{"env1", "env2"} {
		if err := os.Mkdir(filepath.Join(root, dir), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	rc := tracingtest.NewUnix(t, filepath.Join(root, "env1", tracing.SocketName))
	ctx := context.Background()
	shutdown, err := tracing.Start(ctx, tracing.Config{ReceiverRoot: root, ServiceName: "slipway-test"})
	if err != nil {
		t.Fatal(err)
	}
	dctx, span := tracing.StartDeployment(ctx, "dep_2", "env_2", "app_2")
	tracing.Step(dctx, "plan", "succeeded", "", time.Now().Add(-time.Second), time.Now())
	tracing.EndDeployment(span, nil)
	_ = shutdown(ctx)
	names := map[string]bool{}
	for _, s := range rc.Spans() {
		names[s.Name] = true
	}
	if !names["deployment"] || !names["deploy.plan"] {
		t.Fatalf("receiver socket got %v", names)
	}
}
