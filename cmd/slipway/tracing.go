package main

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/tracing"
)

// startTracing exports deployment traces to [telemetry] otlp_endpoint when
// it is set, and to the telemetry receivers listening in their socket
// directories (receiverRoot, "" for none); the returned stop flushes what
// is buffered. A bad endpoint is logged and tracing stays off rather than
// stopping the worker.
func startTracing(ctx context.Context, logger *slog.Logger, cfg config.Config) (stop func()) {
	shutdown, err := tracing.Start(ctx, tracing.Config{Endpoint: cfg.Telemetry.OTLPEndpoint, ReceiverRoot: telemetryRoot(cfg), ServiceName: "slipway-worker"})
	if err != nil {
		logger.Warn("telemetry: traces are off", "error", err)
		return func() {}
	}
	if cfg.Telemetry.OTLPEndpoint != "" {
		logger.Info("telemetry: exporting deployment traces", "endpoint", cfg.Telemetry.OTLPEndpoint)
	}
	return flushTelemetry(ctx, logger, "traces", shutdown)
}

// telemetryRoot is where receivers' socket directories live: under the
// data directory, "" without one.
func telemetryRoot(cfg config.Config) string {
	if cfg.DataDir == "" {
		return ""
	}
	return filepath.Join(cfg.DataDir, "telemetry")
}
