package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/metrics"
)

// newRegistry is a process's metrics registry, reporting River's queue
// depth from pool on every scrape.
func newRegistry(pool *pgxpool.Pool, logger *slog.Logger) *metrics.Registry {
	reg := metrics.New(logger)
	reg.WatchQueue(queueDepth(pool), 5*time.Second)
	return reg
}

// metricsHandler is /metrics for reg behind [metrics]'s token; without a
// token it answers 404 (metrics off).
func metricsHandler(cfg config.Config, reg *metrics.Registry) (http.Handler, error) {
	token, err := cfg.Metrics.ReadToken()
	if err != nil {
		return nil, err
	}
	return reg.Handler(token), nil
}

// serveWorkerMetrics serves the worker's /metrics on [metrics]
// worker_listen until ctx ends and returns its address; nothing (nil)
// when it is unset.
func serveWorkerMetrics(ctx context.Context, cfg config.Config, reg *metrics.Registry, logger *slog.Logger) (net.Addr, error) {
	if cfg.Metrics.WorkerListen == "" {
		return nil, nil
	}
	h, err := metricsHandler(cfg, reg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Metrics.WorkerListen)
	if err != nil {
		return nil, fmt.Errorf("metrics.worker_listen %s: %w", cfg.Metrics.WorkerListen, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("worker metrics listener stopped", "error", err)
		}
	}()
	logger.Info("worker metrics", "url", "http://"+ln.Addr().String()+"/metrics")
	return ln.Addr(), nil
}
