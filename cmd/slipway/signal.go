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

// newLogger is the process logger: text on stderr, at processLogLevel
// (info until setLogLevel applies log_level).
func newLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: &processLogLevel}))
}

// quieter returns a logger that drops records below min: River reports
// routine queue statistics at info every few seconds, which would drown
// Slipway's own lines.
func quieter(logger *slog.Logger, min slog.Level) *slog.Logger {
	return slog.New(minLevelHandler{Handler: logger.Handler(), min: min})
}

type minLevelHandler struct {
	slog.Handler
	min slog.Level
}

func (h minLevelHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevelHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevelHandler{Handler: h.Handler.WithAttrs(attrs), min: h.min}
}

func (h minLevelHandler) WithGroup(name string) slog.Handler {
	return minLevelHandler{Handler: h.Handler.WithGroup(name), min: h.min}
}
