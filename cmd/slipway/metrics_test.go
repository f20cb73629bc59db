package main

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/metrics"
)

// A worker with [metrics] worker_listen serves its own registry there,
// behind the same token as serve's /metrics.
func TestServeWorkerMetrics(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg := metrics.New(nil)
	reg.ObserveDeployment("succeeded", 3*time.Second)
	cfg := config.Default()
	if addr, err := serveWorkerMetrics(ctx, cfg, reg, slog.New(slog.DiscardHandler)); addr != nil || err != nil {
		t.Fatalf("without worker_listen: %v %v, want nothing", addr, err)
	}
	cfg.Metrics.WorkerListen, cfg.Metrics.Token = "127.0.0.1:0", "worker-token"
	addr, err := serveWorkerMetrics(ctx, cfg, reg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	get := func(token string) (int, string) { return scrapeMetrics(t, "http://"+addr.String(), token) }
	if code, _ := get("wrong"); code != http.StatusUnauthorized {
		t.Fatalf("wrong token: %d, want 401", code)
	}
	if code, text := get("worker-token"); code != http.StatusOK || !strings.Contains(text, `slipway_deployments_total{outcome="succeeded"} 1`) {
		t.Fatalf("with the token: %d\n%s", code, text)
	}
}
