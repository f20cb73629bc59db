package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/metrics"
	"github.com/slipwayhq/slipway/notify"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/runtime/build"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
)

// newWorkerCommand is `slipway worker`: River workers for every job kind.
// Run as many as you like against one database; River spreads the jobs.
func newWorkerCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run background jobs: deploys, builds, cleanups (needs DATABASE_URL)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			logger := newLogger()
			cfg, err := loadConfig(cmd, nil)
			if err != nil {
				return err
			}
			setLogLevel(cfg)
			pool, err := openDatabase(ctx, cfg.DatabaseURL, logger)
			if err != nil {
				return err
			}
			defer pool.Close()
			if err := storeQuotaDefaults(ctx, store.New(pool), cfg); err != nil {
				return err
			}
			logger, stopLogs := exportLogs(ctx, logger, cfg, "slipway-worker")
			defer stopLogs()
			reg := newRegistry(pool, logger)
			if _, err := serveWorkerMetrics(ctx, cfg, reg, logger); err != nil {
				return err
			}
			return runWorker(ctx, pool, logger, cfg, reg)
		},
	}
	addConfigFlag(cmd)
	return cmd
}

// newJobClient builds the River client with every registered kind: work
// for worker and dev, insert-only for serve (which still knows the kinds,
// so it refuses to insert one no worker could run). settings is the
// process's configuration, loaded once by the command.
func newJobClient(pool *pgxpool.Pool, logger *slog.Logger, work bool, settings config.Config, reg *metrics.Registry) (*jobs.Client, error) {
	workers := river.NewWorkers()
	deps := jobs.Deps{Store: store.New(pool), Logger: logger}
	var deliverer *notify.Deliverer
	if work {
		// No fallback key: a worker without one refuses to start.
		kr, err := loadSecretKey(settings)
		if err != nil {
			return nil, err
		}
		p, err := newPipeline(deps.Store, logger, pipelineSettingsOf(settings))
		if err != nil {
			return nil, err
		}
		src := secrets.NewSource(deps.Store, kr)
		p.Secrets, p.Logins = src, src
		p.PreviewBounds = previewBounds(settings)
		p.Containers = pipeline.ContainerLimits{PidsLimit: settings.Containers.PidsLimit, DefaultMemoryBytes: settings.Containers.DefaultMemoryBytes}
		p.AllowFileURLs = settings.Git.AllowFileURLs
		p.Telemetry.Root = telemetryRoot(settings)
		p.Metrics = reg
		notifications := notificationService(deps.Store, settings, kr, jobs.InsertFromWorker)
		p.Notify = notifications.Emitter
		deliverer = &notify.Deliverer{Service: notifications, Dial: notificationDial(settings)}
		engine, err := swarm.NewEngine()
		if err != nil {
			return nil, err
		}
		if p.Registry, err = newRegistryProvider(settings, kr, engine, logger); err != nil {
			return nil, err
		}
		deps.Pipeline = p
		if deps.Scheduler, err = newScheduler(deps.Store, p, jobs.Queue{}, logger); err != nil {
			return nil, err
		}
		if deps.Backups, err = newBackups(deps.Store, p, kr, settings, logger); err != nil {
			return nil, err
		}
		deps.Scheduler.Notify, deps.Backups.Notify = notifications.Emitter, notifications.Emitter
	}
	// Pull requests and background sync redeploy previews through one
	// deployer, so a head one of them requested is not requested twice.
	// One lister: sync and preview branch states share listings.
	heads := &build.Lister{}
	previews := service.PreviewDeployer{Previews: newPreviewService(deps.Store, settings, heads), Enqueue: jobs.InsertFromWorker}
	deps.Sync = &jobs.SyncWorker{Store: deps.Store, Lister: heads, AllowFileURLs: settings.Git.AllowFileURLs, Outbound: outboundPolicy(settings), Previews: previews}
	if err := jobs.Register(workers, deps); err != nil {
		return nil, err
	}
	github := githubJobDeps(deps.Store, settings, logger)
	github.Push = deps.Sync
	useGitHubCredentials(deps, settings, logger)
	github.Previews = previews
	if err := jobs.RegisterGitHub(workers, github); err != nil {
		return nil, err
	}
	if err := jobs.RegisterNotifications(workers, deliverer); err != nil {
		return nil, err
	}
	jc := jobsConfig(settings, work, quieter(logger, slog.LevelWarn))
	if work && reg != nil {
		jc.Middleware = []rivertype.Middleware{reg.RiverMiddleware()}
	}
	return jobs.NewClient(pool, workers, jc)
}

// runWorker works jobs until ctx ends, then lets running jobs finish for
// up to 30 seconds.
// reg records the worker's metrics (deployments, job attempts, drift
// repairs); the caller serves it.
func runWorker(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger, cfg config.Config, reg *metrics.Registry) error {
	defer startTracing(ctx, logger, cfg)()
	defer exportMetrics(ctx, logger, cfg, "slipway-worker", reg)()
	c, err := newJobClient(pool, logger, true, cfg, reg)
	if err != nil {
		return err
	}
	// Start's context is not ctx: cancelling it would hard-stop River and
	// cancel running jobs, where a signal should drain them.
	if err := c.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	logger.Info("worker started")
	// The sampler runs outside River jobs: it inserts with the client itself.
	startSampler(ctx, store.New(pool), cfg, notificationService(store.New(pool), cfg, nil, insertWith(c)).Emitter, logger)
	// Docker's service events trigger drift repair between periodic scans.
	if engine, err := swarm.NewEngine(); err == nil {
		go jobs.WatchServiceEvents(ctx, engine, func(ctx context.Context) error {
			_, err := c.Insert(ctx, jobs.ReconcileArgs{}, &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByPeriod: 5 * time.Second}})
			return err
		}, logger)
	}
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := c.Stop(stopCtx); err != nil {
		return fmt.Errorf("stop worker: %w", err)
	}
	logger.Info("worker stopped")
	return nil
}
