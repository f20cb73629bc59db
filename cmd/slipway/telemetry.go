package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/metrics"
	"github.com/slipwayhq/slipway/telemetry"
)

// telemetryConfig is where the daemon's logs and metrics go: [telemetry]
// otlp_endpoint and the telemetry receivers' sockets, as for traces.
func telemetryConfig(cfg config.Config, service string) telemetry.Config {
	return telemetry.Config{
		Endpoint:        cfg.Telemetry.OTLPEndpoint,
		ReceiverRoot:    telemetryRoot(cfg),
		ServiceName:     service,
		MetricsInterval: time.Duration(cfg.Telemetry.MetricsIntervalSeconds) * time.Second,
	}
}

// exportLogs returns logger teed into OTLP logs, at the same level as
// the console, and the function that flushes them. Without a destination,
// or with a bad endpoint (logged), it returns logger unchanged.
func exportLogs(ctx context.Context, logger *slog.Logger, cfg config.Config, service string) (*slog.Logger, func()) {
	h, shutdown, err := telemetry.StartLogs(ctx, telemetryConfig(cfg, service))
	if err != nil {
		logger.Warn("telemetry: logs are not exported", "error", err)
		return logger, func() {}
	}
	if h == nil {
		return logger, func() {}
	}
	teed := slog.New(slog.NewMultiHandler(logger.Handler(), minLevelHandler{Handler: h, min: logLevelOf(cfg)}))
	return teed, flushTelemetry(ctx, logger, "logs", shutdown)
}

// exportMetrics exports reg every [telemetry] metrics_interval_seconds and
// returns the function that exports a last time and stops.
func exportMetrics(ctx context.Context, logger *slog.Logger, cfg config.Config, service string, reg *metrics.Registry) func() {
	shutdown, err := telemetry.StartMetrics(ctx, telemetryConfig(cfg, service), reg.Gatherer())
	if err != nil {
		logger.Warn("telemetry: metrics are not exported", "error", err)
		return func() {}
	}
	return flushTelemetry(ctx, logger, "metrics", shutdown)
}

// flushTelemetry turns an exporter's shutdown into a stop function that
// gets 5 seconds even after ctx ended.
func flushTelemetry(ctx context.Context, logger *slog.Logger, signal string, shutdown func(context.Context) error) func() {
	return func() {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := shutdown(c); err != nil {
			logger.Warn("telemetry: flush "+signal, "error", err)
		}
	}
}

// queueDepth counts River's jobs by queue and state on pool, for the
// registry's slipway_river_jobs.
func queueDepth(pool *pgxpool.Pool) metrics.QueueDepthFunc {
	return func(ctx context.Context) (map[[2]string]int64, error) {
		rows, err := pool.Query(ctx, metrics.QueueDepthQuery)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		depth := map[[2]string]int64{}
		for rows.Next() {
			var queue, state string
			var n int64
			if err := rows.Scan(&queue, &state, &n); err != nil {
				return nil, err
			}
			depth[[2]string{queue, state}] = n
		}
		return depth, rows.Err()
	}
}
