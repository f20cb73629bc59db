package jobs

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/slipwayhq/slipway/backupctl"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/runtime/build"
	"github.com/slipwayhq/slipway/scheduler"
	"github.com/slipwayhq/slipway/store"
)

// Client is the River client type every process uses; jobs are inserted
// with InsertTx on the store's transaction (store.Store.Tx()).
type Client = river.Client[pgx.Tx]

// Config configures NewClient.
type Config struct {
	// Work makes the client run jobs (slipway worker, slipway dev); without
	// it the client only inserts (slipway serve).
	Work bool
	// Queues and how many jobs each runs at once; defaults to the default
	// queue with 10 workers. Ignored without Work.
	Queues map[string]river.QueueConfig
	// Logger receives River's own logs; defaults to slog.Default().
	Logger *slog.Logger
	// Middleware wraps every job attempt (metrics.Registry.RiverMiddleware
	// counts them). Ignored without Work.
	Middleware []rivertype.Middleware
	// DeployConcurrency is how many deploy-queue jobs run at once when
	// Queues is empty (worker.deploy_concurrency); 0 means 4.
	DeployConcurrency int
	// ReconcileInterval is the time between drift scans
	// (reconciliation.scan_interval_seconds); 0 means ReconcileInterval.
	ReconcileInterval time.Duration
}

// defaultDeployConcurrency is worker.deploy_concurrency's default.
const defaultDeployConcurrency = 4

// Deps are what workers need. Later issues add fields (the Swarm engine,
// the GitHub client) here, not in globals.
type Deps struct {
	Store  *store.Store
	Logger *slog.Logger
	// Pipeline advances deployments; nil in insert-only processes (serve),
	// which register the kinds without working them.
	Pipeline *pipeline.Pipeline
	// Sync deploys moved branch heads; nil builds one.
	Sync *SyncWorker
	// Scheduler runs scheduled jobs and Backups backups and restores; nil
	// in insert-only processes (serve).
	Scheduler *scheduler.Scheduler
	Backups   *backupctl.Controller
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// images is the built-image remover: the pipeline's builder, when it has one.
func (d Deps) images() ImageRemover {
	if d.Pipeline == nil {
		return nil
	}
	if r, ok := d.Pipeline.Builds.(ImageRemover); ok {
		return r
	}
	return nil
}

// registry is where the pipeline pushes images, if anywhere.
func (d Deps) registry() pipeline.ImageRegistry {
	if d.Pipeline == nil {
		return nil
	}
	return d.Pipeline.Registry
}

// sync is the worker deploying moved branch heads; GitHub push hints reach
// the same one (GitHubDeps.Push).
func (d Deps) sync() *SyncWorker {
	if d.Sync == nil {
		return &SyncWorker{Store: d.Store, Lister: &build.Lister{}}
	}
	return d.Sync
}

func (d Deps) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d Deps) logger() *slog.Logger {
	if d.Logger != nil {
		return d.Logger
	}
	return slog.Default()
}

// Register adds every job kind's worker to workers. It is the one place
// that lists them: a kind missing here cannot be worked, and an insert-only
// client built with the same workers refuses to insert unknown kinds.
func Register(workers *river.Workers, deps Deps) error {
	if deps.Store == nil {
		return errors.New("jobs: register: Deps.Store is required")
	}
	return errors.Join(
		river.AddWorkerSafely(workers, &SessionCleanupWorker{deps: deps}),
		river.AddWorkerSafely(workers, &DeployWorker{Pipeline: deps.Pipeline}),
		river.AddWorkerSafely(workers, &DeploymentResumeWorker{Store: deps.Store}),
		river.AddWorkerSafely(workers, &ReconcileWorker{Pipeline: deps.Pipeline}),
		river.AddWorkerSafely(workers, deps.sync()),
		river.AddWorkerSafely(workers, &ImageCleanupWorker{Store: deps.Store, Images: deps.images(), Registry: deps.registry()}),
		river.AddWorkerSafely(workers, &EnvironmentTeardownWorker{Pipeline: deps.Pipeline}),
		river.AddWorkerSafely(workers, &LinksReconcileWorker{Pipeline: deps.Pipeline}),
		river.AddWorkerSafely(workers, &PreviewDeleteWorker{Pipeline: deps.Pipeline}),
		river.AddWorkerSafely(workers, &ServiceRestartWorker{Pipeline: deps.Pipeline}),
		river.AddWorkerSafely(workers, &ScheduleTickWorker{Scheduler: deps.Scheduler}),
		river.AddWorkerSafely(workers, &JobRunWorker{Scheduler: deps.Scheduler}),
		river.AddWorkerSafely(workers, &BackupWorker{Backups: deps.Backups}),
		river.AddWorkerSafely(workers, &RestoreWorker{Backups: deps.Backups}),
	)
}

// periodicJobs are inserted by whichever worker process River elected
// leader, so running several workers never duplicates them; reconcile is
// the drift-scan interval.
func periodicJobs(reconcile time.Duration) []*river.PeriodicJob {
	return []*river.PeriodicJob{
		river.NewPeriodicJob(river.PeriodicInterval(sessionCleanupInterval),
			func() (river.JobArgs, *river.InsertOpts) { return SessionCleanupArgs{}, nil },
			&river.PeriodicJobOpts{ID: SessionCleanupArgs{}.Kind(), RunOnStart: true}),
		river.NewPeriodicJob(river.PeriodicInterval(reconcile),
			func() (river.JobArgs, *river.InsertOpts) { return ReconcileArgs{}, nil },
			&river.PeriodicJobOpts{ID: ReconcileArgs{}.Kind(), RunOnStart: true}),
		SyncPeriodicJob(),
		river.NewPeriodicJob(river.PeriodicInterval(ImageCleanupInterval),
			func() (river.JobArgs, *river.InsertOpts) { return ImageCleanupArgs{}, nil },
			&river.PeriodicJobOpts{ID: ImageCleanupArgs{}.Kind()}),
		river.NewPeriodicJob(river.PeriodicInterval(ScheduleTickInterval),
			func() (river.JobArgs, *river.InsertOpts) { return ScheduleTickArgs{}, nil },
			&river.PeriodicJobOpts{ID: ScheduleTickArgs{}.Kind(), RunOnStart: true}),
		river.NewPeriodicJob(river.PeriodicInterval(ResumeInterval),
			func() (river.JobArgs, *river.InsertOpts) { return DeploymentResumeArgs{}, nil },
			&river.PeriodicJobOpts{ID: DeploymentResumeArgs{}.Kind(), RunOnStart: true}),
	}
}

// NewClient builds the River client over pool. workers must have been
// filled by Register (serve builds the same registry so inserts are
// checked against known kinds).
func NewClient(pool *pgxpool.Pool, workers *river.Workers, cfg Config) (*Client, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	rc := &river.Config{
		Logger:  logger,
		Workers: workers,
	}
	if cfg.Work {
		rc.Queues = cfg.Queues
		if len(rc.Queues) == 0 {
			rc.Queues = map[string]river.QueueConfig{
				river.QueueDefault: {MaxWorkers: 10},
				QueueDeploy:        {MaxWorkers: cmp.Or(cfg.DeployConcurrency, defaultDeployConcurrency)},
				QueueSchedules:     {MaxWorkers: 4},
			}
		}
		rc.PeriodicJobs = periodicJobs(cmp.Or(cfg.ReconcileInterval, ReconcileInterval))
		rc.Middleware = cfg.Middleware
	}
	c, err := river.NewClient(riverpgxv5.New(pool), rc)
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	return c, nil
}
