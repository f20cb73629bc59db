package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"time"

	"github.com/slipwayhq/slipway/metrics"
	"github.com/slipwayhq/slipway/outbound"
	"github.com/slipwayhq/slipway/runtime/build"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

// Pipeline advances deployments: capture, prepare, plan, jobs, rollout,
// routes, cleanup. Every step is persisted on the deployment so a retry or
// another worker resumes where it stopped.
type Pipeline struct {
	Store  *store.Store
	Driver SwarmDriver
	Images ImageResolver
	// Builds prepares git sources; nil refuses them.
	Builds SourceBuilder
	// Registry receives built images so every node can pull them
	// (registry.go); nil keeps local image IDs.
	Registry ImageRegistry
	// Logins are teams' registry accounts: image-sourced services are
	// pulled with their team's, and Swarm gets the same with each service
	// (registry.go); nil pulls anonymously.
	Logins RegistryLogins
	// Credentials reads private repositories (jobs.GitHubCredentials); nil
	// reads anonymously.
	Credentials RepositoryCredentials
	// AllowFileURLs lets git sources name file:// repositories (the
	// operator's [git] allow_file_urls); off, runtime/build refuses them.
	AllowFileURLs bool
	// Outbound decides where git remotes may be reached (package
	// outbound); nil is the strict policy. Image pulls are checked by the
	// ImageResolver's own policy.
	Outbound *outbound.Policy
	// PrepareTimeout bounds each source's checkout and build (default 300 s).
	PrepareTimeout time.Duration
	Routes         RoutesHook
	// Secrets supplies mounted secrets; nil refuses manifests that mount any.
	Secrets SecretSource
	// Metrics counts outcomes; nil records nothing.
	Metrics *metrics.Registry
	// Containers are the daemon's [containers] limits of every tenant
	// container; zero fields take runtime/swarm's defaults.
	Containers ContainerLimits
	// PreviewBounds are the daemon's [previews] resource bounds, applied to
	// previews only (preview_bounds.go); the zero value bounds nothing.
	PreviewBounds PreviewBounds
	// Queue inserts the work that follows a change, in the change's
	// transaction (jobs.Queue); nil queues nothing.
	Queue Queue
	// Notify tells the team's notification destinations of outcomes
	// (notify.go); nil tells nobody.
	Notify Notifier
	Log    *slog.Logger
	// ConvergenceTimeout bounds each service's convergence (default 120 s).
	ConvergenceTimeout time.Duration
	// LeaseTTL is how long a worker's claim on a deployment lasts without
	// renewal (default 20 s); a dead worker's deployment resumes after it.
	LeaseTTL time.Duration
	// Owner names this worker in leases; random when empty.
	Owner string
	// Links enqueues links_reconcile after each successful deployment and
	// teardown (links.go).
	Links bool
	// Telemetry locates receivers' socket directories (telemetry.go).
	Telemetry TelemetryHost
}

// ContainerLimits bound each tenant container (swarm.DesiredInput).
type ContainerLimits struct {
	PidsLimit          int64
	DefaultMemoryBytes int64
}

// processOwner names this worker process in leases when Owner is empty.
var processOwner = func() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "worker-" + hex.EncodeToString(b[:])
}()

// The accessors below give each setting its default without writing to
// the Pipeline: workers call into one Pipeline concurrently.

func (p *Pipeline) convergenceTimeout() time.Duration {
	if p.ConvergenceTimeout <= 0 {
		return 120 * time.Second
	}
	return p.ConvergenceTimeout
}

func (p *Pipeline) prepareTimeout() time.Duration {
	if p.PrepareTimeout <= 0 {
		return build.DefaultPrepareTimeout
	}
	return p.PrepareTimeout
}

func (p *Pipeline) leaseTTL() time.Duration {
	if p.LeaseTTL <= 0 {
		return 20 * time.Second
	}
	return p.LeaseTTL
}

func (p *Pipeline) owner() string {
	if p.Owner == "" {
		return processOwner
	}
	return p.Owner
}

func (p *Pipeline) queue() Queue {
	if p.Queue == nil {
		return noQueue{}
	}
	return p.Queue
}

var discardLog = slog.New(slog.DiscardHandler)

func (p *Pipeline) logger() *slog.Logger {
	if p.Log == nil {
		return discardLog
	}
	return p.Log
}

// Advance runs the deployment until it finishes, or returns an error to
// retry (Docker unreachable), a *WaitError (another deployment of the
// environment runs first, or another worker holds this one) or a
// *PermanentError (the deployment is gone).
func (p *Pipeline) Advance(ctx context.Context, teamID, id string) error {
	d, err := p.Store.GetDeployment(ctx, teamID, id)
	if errors.Is(err, store.ErrNotFound) {
		return &PermanentError{Err: err}
	}
	if err != nil {
		return err
	}
	if d.State.Terminal() {
		return nil
	}
	if _, err := p.Store.EarlierLiveDeployment(ctx, teamID, d.EnvironmentID, d.ID); err == nil {
		return &WaitError{After: 2 * time.Second, Reason: "an earlier deployment of the environment runs first"}
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if err := p.acquireSlot(ctx, teamID, id); err != nil {
		return err
	}
	// The lease is renewed while the deployment advances; a cancelled
	// deployment cancels the work in progress.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go p.keepLease(runCtx, cancel, teamID, id)
	defer func() {
		_ = p.Store.ReleaseDeploymentLease(context.WithoutCancel(ctx), teamID, id, p.owner())
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
		p.logger().WarnContext(ctx, "docker unavailable, deployment will be retried", "deployment", id, "error", err)
		r.event(ctx, "deployment.retrying", map[string]any{"code": swarm.CodeDockerUnavailable, "message": err.Error()})
	}
	return err
}

// keepLease renews the lease and watches for cancellation.
func (p *Pipeline) keepLease(ctx context.Context, cancel context.CancelFunc, teamID, id string) {
	t := time.NewTicker(p.leaseTTL() / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := p.Store.AcquireDeploymentLease(ctx, teamID, id, p.owner(), p.leaseTTL()); err != nil {
			if ctx.Err() == nil {
				p.logger().WarnContext(ctx, "lost deployment lease", "deployment", id, "error", err)
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
