package main

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/notify"
	"github.com/slipwayhq/slipway/notify/send"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/sampler"
	"github.com/slipwayhq/slipway/store"
)

// notificationService is the team's destinations and the emitter every
// event source calls; enqueue inserts delivery jobs in the caller's
// transaction.
func notificationService(st *store.Store, cfg config.Config, kr *keyring.Keyring, enqueue jobs.Enqueue) *notify.Service {
	return &notify.Service{
		Store:   st,
		Keyring: kr,
		Emitter: &notify.Emitter{PublicURL: cfg.BaseURL(), Enqueue: jobs.NotificationEnqueue(enqueue)},
	}
}

// insertWith is jobs.Enqueue over an insert-only client (serve).
func insertWith(inserter app.JobInserter) jobs.Enqueue {
	return func(ctx context.Context, tx *store.Store, args river.JobArgs) error {
		_, err := inserter.InsertTx(ctx, tx.Tx(), args, nil)
		return err
	}
}

// notificationDial makes the connections of notification deliveries:
// webhook, Slack and Discord URLs and SMTP servers are tenant-directed, so
// they pass the outbound-address check where they connect.
func notificationDial(cfg config.Config) send.DialFunc {
	return outboundPolicy(cfg).DialContext
}

// startSampler runs the usage sampler (package sampler) in the worker
// until ctx ends: this node's containers, and, when it holds the cluster
// scope, Swarm-wide counts, the gateway's routes and the rollups.
func startSampler(ctx context.Context, st *store.Store, cfg config.Config, emitter *notify.Emitter, logger *slog.Logger) {
	s := &sampler.Sampler{Store: st, Notify: emitter, Log: logger, Every: time.Duration(cfg.Worker.UsageSampleSeconds) * time.Second}
	if engine, err := swarm.NewEngine(); err == nil {
		s.Engine = engine
	} else {
		logger.Warn("usage sampler without docker: services are not sampled", "err", err)
	}
	if in := cfg.Ingress; in.MetricsAddr != "" {
		tok, err := os.ReadFile(in.MetricsTokenFile)
		if err != nil {
			logger.Warn("usage sampler: gateway metrics token unreadable; routes are not sampled", "err", err)
		} else {
			s.Gateway = &sampler.Gateway{URL: "http://" + in.MetricsAddr + "/metrics", Token: strings.TrimSpace(string(tok))}
		}
	}
	go s.Run(ctx)
}
