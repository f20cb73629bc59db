package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/metrics"
	"github.com/slipwayhq/slipway/runtime/build"
	"github.com/slipwayhq/slipway/runtime/image"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
)

// DeployArgs asks a worker to advance one deployment as far as it goes.
// Resume distinguishes the job inserted when a worker died holding the
// deployment from the original one.
type DeployArgs struct {
	TeamID       string `json:"team_id"`
	DeploymentID string `json:"deployment_id"`
	Resume       int    `json:"resume,omitempty"`
}

// Kind is the River job kind.
func (DeployArgs) Kind() string { return "deploy" }

// InsertOpts: deploy jobs have their own queue and many attempts, since
// Docker being unreachable is retried with backoff rather than failing.
func (DeployArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		Queue:       QueueDeploy,
		MaxAttempts: 25,
		UniqueOpts:  river.UniqueOpts{ByArgs: true},
	}
}

// QueueDeploy runs deployments; its concurrency bounds how many
// environments deploy at once on one worker.
const QueueDeploy = "deploy"

// SwarmDriver is the part of runtime/swarm the pipeline drives.
type SwarmDriver interface {
	Observe(ctx context.Context, env swarm.EnvRef) (swarm.Observed, error)
	EnsureNetworks(ctx context.Context, desired swarm.DesiredState) error
	EnsureVolumes(ctx context.Context, desired swarm.DesiredState) error
	EnsureConfigs(ctx context.Context, desired swarm.DesiredState) error
	EnsureSecrets(ctx context.Context, desired swarm.DesiredState) error
	UpdateService(ctx context.Context, want swarm.ServiceSpec) (changed bool, err error)
	WaitConverged(ctx context.Context, want swarm.ServiceSpec, timeout time.Duration) error
	RunJob(ctx context.Context, job swarm.JobSpec) (swarm.JobResult, error)
	StopService(ctx context.Context, env swarm.EnvRef, service string) error
	RemoveService(ctx context.Context, env swarm.EnvRef, swarmName string) error
	RemoveObject(ctx context.Context, a swarm.Action) error
}

// ImageResolver pins image references (runtime/image).
type ImageResolver interface {
	Resolve(ctx context.Context, ref string) (image.Resolved, error)
}

// RoutesHook activates a converged deployment's routes on the gateway and
// withdraws the ones it no longer has. Nil means no ingress.
type RoutesHook interface {
	// Withdraw removes routes the deployment drops, before their backends go.
	Withdraw(ctx context.Context, d store.Deployment, env store.Environment, rendered []byte) error
	// Activate publishes the deployment's routes once its backends converged.
	Activate(ctx context.Context, d store.Deployment, env store.Environment, rendered []byte) error
	// Connect joins the gateway to the environment's ingress overlay (which
	// exists by then) and returns the gateway's addresses on it, the value
	// of SLIPWAY_INGRESS_PROXIES for routed services.
	Connect(ctx context.Context, env store.Environment, network string) (proxies string, err error)
}

// SourceBuilder checks out and builds git sources (runtime/build).
type SourceBuilder interface {
	PrepareSource(ctx context.Context, req build.SourceRequest) (*build.BuildResult, error)
}

// SecretSource supplies the secret files a deployment mounts. Values are
// decrypted only here, in the worker, and only for the pinned versions.
type SecretSource interface {
	// Capture pins a version of every secret the rendered manifest mounts
	// in env (generating declared secrets that have no value there yet) and
	// returns name -> version. Refusals (secret_missing,
	// secret_access_denied) are *Failure.
	Capture(ctx context.Context, teamID string, env store.Environment, m *manifest.Manifest) (map[string]string, error)
	// Values returns the values of pinned versions.
	Values(ctx context.Context, teamID string, env store.Environment, pinned map[string]string) (map[string]swarm.SecretValue, error)
}

// Pipeline advances deployments: capture, prepare, plan, jobs, rollout,
// routes, cleanup. Every step is persisted on the deployment so a retry or
// another worker resumes where it stopped.
type Pipeline struct {
	Store  *store.Store
	Driver SwarmDriver
	Images ImageResolver
	// Builds prepares git sources; nil refuses them.
	Builds SourceBuilder
	// Credentials reads private repositories (github_credentials.go); nil
	// reads anonymously.
	Credentials RepositoryCredentials
	// AllowFileURLs lets git sources name file:// repositories (the
	// operator's [git] allow_file_urls); off, runtime/build refuses them.
	AllowFileURLs bool
	// PrepareTimeout bounds each source's checkout and build (default 300 s).
	PrepareTimeout time.Duration
	Routes         RoutesHook
	// Secrets supplies mounted secrets; nil refuses manifests that mount any.
	Secrets SecretSource
	// Metrics counts outcomes; nil records nothing.
	Metrics *metrics.Registry
	// PreviewBounds are the daemon's [previews] resource bounds, applied to
	// previews only (preview_bounds.go); the zero value bounds nothing.
	PreviewBounds PreviewBounds
	// Enqueue inserts a job in the transaction of tx; nil uses the River
	// client working the current job (InsertTx).
	Enqueue func(ctx context.Context, tx *store.Store, args river.JobArgs) error
	Log     *slog.Logger
	// ConvergenceTimeout bounds each service's convergence (default 120 s).
	ConvergenceTimeout time.Duration
	// LeaseTTL is how long a worker's claim on a deployment lasts without
	// renewal (default 20 s); a dead worker's deployment resumes after it.
	LeaseTTL time.Duration
	// Owner names this worker in leases; random when empty.
	Owner string
	// Links enqueues links_reconcile after each successful deployment and
	// teardown (links_reconcile.go).
	Links bool
	// Telemetry locates receivers' socket directories (telemetry_mount.go).
	Telemetry TelemetryHost
}

func (p *Pipeline) defaults() {
	if p.ConvergenceTimeout <= 0 {
		p.ConvergenceTimeout = 120 * time.Second
	}
	if p.PrepareTimeout <= 0 {
		p.PrepareTimeout = build.DefaultPrepareTimeout
	}
	if p.LeaseTTL <= 0 {
		p.LeaseTTL = 20 * time.Second
	}
	if p.Owner == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		p.Owner = "worker-" + hex.EncodeToString(b[:])
	}
	if p.Enqueue == nil {
		p.Enqueue = InsertFromWorker
	}
	if p.Log == nil {
		p.Log = slog.New(slog.DiscardHandler)
	}
}

// InsertFromWorker inserts args in tx's transaction with the River client
// that is working the current job.
func InsertFromWorker(ctx context.Context, tx *store.Store, args river.JobArgs) error {
	client := river.ClientFromContext[pgx.Tx](ctx)
	_, err := client.InsertTx(ctx, tx.Tx(), args, nil)
	return err
}

// DeployWorker is the River worker of DeployArgs.
type DeployWorker struct {
	river.WorkerDefaults[DeployArgs]
	Pipeline *Pipeline
}

// Timeout: a deployment waits for builds, jobs and convergence, each bounded
// by its own setting; River's default one-minute limit does not fit.
func (w *DeployWorker) Timeout(*river.Job[DeployArgs]) time.Duration { return -1 }

// Work advances the deployment.
func (w *DeployWorker) Work(ctx context.Context, job *river.Job[DeployArgs]) error {
	return w.Pipeline.Advance(ctx, job.Args.TeamID, job.Args.DeploymentID)
}

// Failure is a step error that ends the deployment as failed, with a
// snake_case code and a message for people. Anything else a step returns is
// retried by River.
type Failure struct {
	Code    string
	Message string
}

func (f *Failure) Error() string { return f.Code + ": " + f.Message }

func fail(code, format string, args ...any) error {
	return &Failure{Code: code, Message: fmt.Sprintf(format, args...)}
}

// codedError is any error that carries a snake_case code for people, such
// as the secrets package's refusals.
type codedError interface {
	error
	ErrorCode() string
}

// asCoded turns a coded error into a Failure; other errors stay retryable.
func asCoded(err error) error {
	var c codedError
	if errors.As(err, &c) && c.ErrorCode() != "" {
		return &Failure{Code: c.ErrorCode(), Message: c.Error()}
	}
	var se *secrets.Error
	if errors.As(err, &se) {
		return &Failure{Code: se.Code, Message: se.Message}
	}
	return err
}

// Advance runs the deployment until it finishes, or returns an error River
// retries (Docker unreachable) or a snooze (another deployment of the
// environment runs first).
func (p *Pipeline) Advance(ctx context.Context, teamID, id string) error {
	p.defaults()
	d, err := p.Store.GetDeployment(ctx, teamID, id)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	if d.State.Terminal() {
		return nil
	}
	if _, err := p.Store.EarlierLiveDeployment(ctx, teamID, d.EnvironmentID, d.ID); err == nil {
		return river.JobSnooze(2 * time.Second)
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if err := p.Store.AcquireDeploymentLease(ctx, teamID, id, p.Owner, p.LeaseTTL); err != nil {
		if errors.Is(err, store.ErrLeaseHeld) {
			return river.JobSnooze(p.LeaseTTL / 2)
		}
		return err
	}
	// The lease is renewed while the deployment advances; a cancelled
	// deployment cancels the work in progress.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go p.keepLease(runCtx, cancel, teamID, id)
	defer func() {
		_ = p.Store.ReleaseDeploymentLease(context.WithoutCancel(ctx), teamID, id, p.Owner)
	}()

	r, err := p.newRun(runCtx, d)
	if err != nil {
		return err
	}
	err = r.advanceTraced(runCtx)
	if err == nil {
		return nil
	}
	if ctx.Err() == nil && runCtx.Err() != nil {
		// Cancelled while running: the canceller recorded the outcome.
		return nil
	}
	var f *Failure
	if errors.As(err, &f) {
		return r.finishFailed(context.WithoutCancel(ctx), f)
	}
	if swarm.IsDockerUnavailable(err) {
		p.Log.WarnContext(ctx, "docker unavailable, deployment will be retried", "deployment", id, "error", err)
		r.event(ctx, "deployment.retrying", map[string]any{"code": swarm.CodeDockerUnavailable, "message": err.Error()})
	}
	return err
}

// keepLease renews the lease and watches for cancellation.
func (p *Pipeline) keepLease(ctx context.Context, cancel context.CancelFunc, teamID, id string) {
	t := time.NewTicker(p.LeaseTTL / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := p.Store.AcquireDeploymentLease(ctx, teamID, id, p.Owner, p.LeaseTTL); err != nil {
			if ctx.Err() == nil {
				p.Log.WarnContext(ctx, "lost deployment lease", "deployment", id, "error", err)
				cancel()
			}
			return
		}
		d, err := p.Store.GetDeployment(ctx, teamID, id)
		if err == nil && d.State.Terminal() {
			cancel()
			return
		}
	}
}
