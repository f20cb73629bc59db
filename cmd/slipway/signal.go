package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// signalContext ends on SIGINT or SIGTERM, which is how every long-running
// command (serve, worker, dev) is stopped.
func signalContext(parent context.Context) (context.Context, context.CancelFunc) {
	if parent == nil {
		parent = context.Background()
	}
	return signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
}

// newLogger is the process logger: text on stderr, level from SLIPWAY_LOG_LEVEL.
func newLogger() *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(envOr("SLIPWAY_LOG_LEVEL", "info")))
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}
