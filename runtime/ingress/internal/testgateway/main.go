package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/slipwayhq/slipway/runtime/ingress"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := ingress.ConfigFromEnv(os.Getenv)
	if err != nil {
		slog.Error("gateway", "err", err)
		os.Exit(2)
	}
	cfg.Log = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if err := ingress.Run(ctx, cfg); err != nil {
		slog.Error("gateway", "err", err)
		os.Exit(1)
	}
}
