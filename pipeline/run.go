package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/routelive"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

// run is one deployment being advanced.
type run struct {
	p        *Pipeline
	d        store.Deployment
	env      store.Environment
	app      store.Application
	progress Progress
	rendered *manifest.Manifest
	desired  swarm.DesiredState
	// fetched is what a repository-backed deployment read (fetch.go).
	fetched *store.DeploymentFetch
	// auths caches the team's registry accounts by host (registry.go).
	auths map[string]string
	// planning is set by a deployment's plan: the gateways join the
	// environment's network before its services are created
	// (connectGateways); notJoined says which did not in time.
	planning  bool
	notJoined *routelive.NotJoinedError
}

func (p *Pipeline) newRun(ctx context.Context, d store.Deployment) (*run, error) {
	env, err := p.Store.GetEnvironment(ctx, d.TeamID, d.EnvironmentID)
	if err != nil {
		return nil, err
	}
	app, err := p.Store.GetApplication(ctx, d.TeamID, d.ApplicationID)
	if err != nil {
		return nil, err
	}
	progress, err := ParseProgress(d.Steps)
	if err != nil {
		return nil, fmt.Errorf("read progress of %s: %w", d.ID, err)
	}
	return &run{p: p, d: d, env: env, app: app, progress: progress}, nil
}

func (r *run) envRef() swarm.EnvRef {
	return swarm.EnvRef{ID: r.env.ID, ShortID: store.ShortID(r.env.ID)}
}

// stageOrder ranks the live states: a resumed deployment skips the
// transitions it already made.
var stageOrder = map[store.DeploymentState]int{
	store.StateRequested:   0,
	store.StateCapturing:   1,
	store.StatePreparing:   2,
	store.StateRunningJobs: 3,
	store.StateRollingOut:  4,
	store.StateSucceeded:   5,
}

// transition moves the deployment on, tolerating a retry or a resumed
// deployment that is there already, or past it.
func (r *run) transition(ctx context.Context, to store.DeploymentState, from ...store.DeploymentState) error {
	if cur, ok := stageOrder[r.d.State]; ok && cur >= stageOrder[to] {
		return nil
	}
	d, err := r.p.transitionTx(ctx, func(tx *store.Store) (store.Deployment, error) {
		return tx.TransitionDeployment(ctx, r.d.TeamID, r.d.ID, from, to)
	})
	if err != nil {
		return err
	}
	r.d = d
	r.event(ctx, "deployment."+string(to), nil)
	return nil
}

// save persists the progress record.
func (r *run) save(ctx context.Context) error {
	return r.p.Store.SetDeploymentSteps(ctx, r.d.TeamID, r.d.ID, r.progress.JSON())
}

func (r *run) start(ctx context.Context, step string) error {
	r.progress.Start(step, time.Now().UTC())
	return r.save(ctx)
}

func (r *run) finish(ctx context.Context, step, state, message string) error {
	r.progress.Finish(step, state, message, time.Now().UTC())
	r.traceStep(ctx, step)
	return r.save(ctx)
}

func (r *run) event(ctx context.Context, verb string, details map[string]any) {
	if details == nil {
		details = map[string]any{}
	}
	details["environment_id"] = r.env.ID
	details["application_id"] = r.app.ID
	_, err := r.p.Store.RecordEvent(context.WithoutCancel(ctx), r.d.TeamID, store.EventParams{
		Actor: "worker", Verb: verb, ObjectType: "deployment", ObjectID: r.d.ID, Details: details,
	})
	if err != nil {
		r.p.logger().WarnContext(ctx, "record event", "verb", verb, "error", err)
	}
}

// advance runs every remaining step.
func (r *run) advance(ctx context.Context) error {
	if err := r.transition(ctx, store.StateCapturing, store.StateRequested); err != nil {
		return err
	}
	if err := r.capture(ctx); err != nil {
		return err
	}
	if err := r.transition(ctx, store.StatePreparing, store.StateCapturing); err != nil {
		return err
	}
	if err := r.prepare(ctx); err != nil {
		return err
	}
	// A prepared repository-backed deployment saves what it read when it
	// changed (fetch.go).
	if err := r.adoptFetchedManifest(ctx); err != nil {
		return err
	}
	if err := r.plan(ctx); err != nil {
		return err
	}
	if r.runsJobs() {
		if err := r.transition(ctx, store.StateRunningJobs, store.StatePreparing); err != nil {
			return err
		}
		if err := r.jobs(ctx); err != nil {
			return err
		}
	}
	if err := r.transition(ctx, store.StateRollingOut, store.StatePreparing, store.StateRunningJobs); err != nil {
		return err
	}
	if err := r.rollout(ctx); err != nil {
		return err
	}
	if err := r.cleanup(ctx); err != nil {
		return err
	}
	if err := r.transition(ctx, store.StateSucceeded, store.StateRollingOut); err != nil {
		return err
	}
	r.observe("succeeded")
	if err := r.deployed(context.WithoutCancel(ctx)); err != nil {
		r.p.logger().WarnContext(ctx, "record schedules", "deployment", r.d.ID, "error", err)
	}
	if err := r.p.linksChanged(context.WithoutCancel(ctx), r.d.TeamID); err != nil {
		r.p.logger().WarnContext(ctx, "enqueue links reconcile", "deployment", r.d.ID, "error", err)
	}
	return nil
}

// observe counts the deployment's outcome and duration.
func (r *run) observe(outcome string) {
	start := r.d.CreatedAt
	if r.d.StartedAt != nil {
		start = *r.d.StartedAt
	}
	r.p.Metrics.ObserveDeployment(outcome, time.Since(start))
}

// transitionTx writes a state change and queues what follows it (the
// GitHub notification, the team's notifications) in one transaction.
func (p *Pipeline) transitionTx(ctx context.Context, change func(tx *store.Store) (store.Deployment, error)) (store.Deployment, error) {
	var d store.Deployment
	err := p.Store.WithTx(ctx, func(tx *store.Store) error {
		var err error
		if d, err = change(tx); err != nil {
			return err
		}
		if err := p.queue().StateChanged(ctx, tx, d); err != nil {
			return err
		}
		return p.notifyOutcome(ctx, tx, d)
	})
	return d, err
}
