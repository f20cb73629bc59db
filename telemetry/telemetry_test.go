package telemetry_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"

	"github.com/slipwayhq/slipway/metrics"
	"github.com/slipwayhq/slipway/telemetry"
	"github.com/slipwayhq/slipway/tracing/tracingtest"
)

// TestStartLogs_ExportsRecords logs through slog into the exporting
// handler and checks the OTLP log records that arrive: body, severity and
// attributes, including those added with With.
func TestStartLogs_ExportsRecords(t *testing.T) {
	rc := tracingtest.New(t)
	ctx := context.Background()
	h, shutdown, err := telemetry.StartLogs(ctx, telemetry.Config{Endpoint: rc.URL, ServiceName: "slipway-test"})
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(h)
	logger.Info("deployment finished", "deployment", "dep_1", "attempt", 2)
	logger.With("environment", "production").Warn("drift repaired")
	if err := shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	if paths := rc.Paths(); len(paths) == 0 || paths[0] != "/v1/logs" {
		t.Fatalf("paths %v, want /v1/logs", paths)
	}
	byBody := map[string]*logspb.LogRecord{}
	for _, r := range rc.Logs() {
		byBody[r.Body.GetStringValue()] = r
	}
	done, drift := byBody["deployment finished"], byBody["drift repaired"]
	if done == nil || drift == nil {
		t.Fatalf("records %v", rc.Logs())
	}
	if tracingtest.AttrOf(done.Attributes, "deployment") != "dep_1" || intAttr(done.Attributes, "attempt") != 2 {
		t.Errorf("attributes %v", done.Attributes)
	}
	if done.SeverityNumber != logspb.SeverityNumber_SEVERITY_NUMBER_INFO || drift.SeverityNumber != logspb.SeverityNumber_SEVERITY_NUMBER_WARN {
		t.Errorf("severities %v, %v", done.SeverityNumber, drift.SeverityNumber)
	}
	if tracingtest.AttrOf(drift.Attributes, "environment") != "production" {
		t.Errorf("With attributes lost: %v", drift.Attributes)
	}
}

// TestStartLogs_DeadReceivers: with one receiver refusing connections and
// one that accepts and never answers, logging far more records than the
// queue holds still returns, and the receiver that listens gets them.
func TestStartLogs_DeadReceivers(t *testing.T) {
	root := t.TempDir()
	for _, dir := range []string{"env0", "env1", "env2"} {
		if err := os.Mkdir(filepath.Join(root, dir), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	// env0: a socket file nobody listens on any more.
	dead, err := net.Listen("unix", filepath.Join(root, "env0", telemetry.SocketName))
	if err != nil {
		t.Fatal(err)
	}
	dead.(*net.UnixListener).SetUnlinkOnClose(false)
	_ = dead.Close()
	rc := tracingtest.NewUnix(t, filepath.Join(root, "env1", telemetry.SocketName))
	// env2: accepts requests and never answers them.
	hung, err := net.Listen("unix", filepath.Join(root, "env2", telemetry.SocketName))
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release })}
	go func() { _ = srv.Serve(hung) }()
	t.Cleanup(func() { close(release); _ = srv.Close() })

	h, shutdown, err := telemetry.StartLogs(context.Background(), telemetry.Config{ReceiverRoot: root, ServiceName: "slipway-test"})
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(h)
	for i := range 10000 {
		logger.Info("step", "n", i)
	}
	for deadline := time.Now().Add(30 * time.Second); len(rc.Logs()) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the listening receiver got no records")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = shutdown(ctx)
}

// TestStartMetrics_ExportsRegistry records into package metrics' registry
// and checks the OTLP metrics that arrive, at the endpoint and at a
// receiver's socket: the counter's value by label, and the histogram's
// count.
func TestStartMetrics_ExportsRegistry(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "env1"), 0o750); err != nil {
		t.Fatal(err)
	}
	sock := tracingtest.NewUnix(t, filepath.Join(root, "env1", telemetry.SocketName))
	rc := tracingtest.New(t)
	reg := metrics.New(nil)
	reg.ObserveDeployment("succeeded", 3*time.Second)
	reg.ObserveDeployment("succeeded", 4*time.Second)
	reg.ObserveDeployment("failed", time.Second)
	ctx := context.Background()
	shutdown, err := telemetry.StartMetrics(ctx, telemetry.Config{Endpoint: rc.URL, ReceiverRoot: root, ServiceName: "slipway-test", MetricsInterval: time.Hour}, reg.Gatherer())
	if err != nil {
		t.Fatal(err)
	}
	// Stopping exports one last time, so the hour never has to pass.
	if err := shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]*tracingtest.Receiver{"endpoint": rc, "socket": sock} {
		if name == "endpoint" {
			if paths := got.Paths(); len(paths) == 0 || paths[0] != "/v1/metrics" {
				t.Fatalf("paths %v, want /v1/metrics", paths)
			}
		}
		byName := map[string]*metricspb.Metric{}
		for _, m := range got.Metrics() {
			byName[m.Name] = m
		}
		total := byName["slipway_deployments_total"]
		if total == nil || total.GetSum() == nil || !total.GetSum().IsMonotonic {
			t.Fatalf("%s: slipway_deployments_total is %v", name, total)
		}
		values := map[string]float64{}
		for _, p := range total.GetSum().DataPoints {
			values[tracingtest.AttrOf(p.Attributes, "outcome")] = p.GetAsDouble()
		}
		if fmt.Sprint(values) != "map[failed:1 succeeded:2]" {
			t.Errorf("%s: deployments by outcome %v", name, values)
		}
		var count uint64
		for _, p := range byName["slipway_deployment_duration_seconds"].GetHistogram().GetDataPoints() {
			count += p.Count
		}
		if count != 3 {
			t.Errorf("%s: duration histogram counts %d deployments, want 3", name, count)
		}
	}
}

func TestSignalURL(t *testing.T) {
	for endpoint, want := range map[string]string{
		"http://collector:4318":             "http://collector:4318/v1/logs",
		"http://collector:4318/":            "http://collector:4318/v1/logs",
		"https://collector:4318/v1/traces":  "https://collector:4318/v1/logs",
		"http://proxy:8080/otlp":            "http://proxy:8080/otlp/v1/logs",
		"http://proxy:8080/otlp/v1/traces/": "http://proxy:8080/otlp/v1/logs",
	} {
		if got, err := telemetry.SignalURL(endpoint, telemetry.Logs); err != nil || got != want {
			t.Errorf("SignalURL(%q) = %q, %v; want %q", endpoint, got, err, want)
		}
	}
	for _, bad := range []string{"collector:4318", "ftp://collector", "http://", "://x"} {
		if _, err := telemetry.SignalURL(bad, telemetry.Metrics); err == nil {
			t.Errorf("SignalURL(%q) accepted", bad)
		}
	}
}

func intAttr(attrs []*commonpb.KeyValue, key string) int64 {
	for _, kv := range attrs {
		if kv.Key == key {
			return kv.Value.GetIntValue()
		}
	}
	return -1
}
