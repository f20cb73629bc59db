package jobs

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

// ReconcileArgs repairs drift: every environment's services are compared,
// field by field, with the deployment it should run, and changed back.
type ReconcileArgs struct{}

// Kind is the River job kind.
func (ReconcileArgs) Kind() string { return "reconcile" }

// ReconcileInterval is reconciliation.scan_interval_seconds' default.
const ReconcileInterval = 60 * time.Second

// ReconcileWorker runs ReconcileArgs.
type ReconcileWorker struct {
	river.WorkerDefaults[ReconcileArgs]
	Pipeline *Pipeline
	// OnRepair, when set, is told of every repaired service (metrics).
	OnRepair func(service string, drift []swarm.Drift)
}

// Work scans every maintained deployment. One environment's error is logged
// and the scan goes on; repair never runs jobs and never waits for
// convergence. With links on, each team's links are reconciled first, so a
// links_reconcile that failed or never ran (a lost network, a missed
// attachment) is repaired on the next scan too, before services are
// compared with the networks they should join.
func (w *ReconcileWorker) Work(ctx context.Context, _ *river.Job[ReconcileArgs]) error {
	p := w.Pipeline
	p.defaults()
	refs, err := p.Store.ListMaintainedDeployments(ctx)
	if err != nil {
		return err
	}
	if err := w.reconcileTeamLinks(ctx, refs); err != nil {
		return err
	}
	var unavailable error
	for _, ref := range refs {
		if err := w.repair(ctx, ref); err != nil {
			if swarm.IsDockerUnavailable(err) {
				unavailable = err
				break
			}
			p.Log.WarnContext(ctx, "reconcile environment", "deployment", ref.ID, "error", err)
		}
	}
	return unavailable
}

// Repaired is what one reconciliation changed.
type Repaired struct {
	Service string
	Drift   []swarm.Drift
}

// reconcileTeamLinks reconciles the links of every team with a maintained
// deployment. One team's error is logged and the scan goes on; an
// unreachable Docker engine ends it.
func (w *ReconcileWorker) reconcileTeamLinks(ctx context.Context, refs []store.DeploymentRef) error {
	p := w.Pipeline
	if !p.Links {
		return nil
	}
	done := map[string]bool{}
	for _, ref := range refs {
		if done[ref.TeamID] {
			continue
		}
		done[ref.TeamID] = true
		if _, err := p.ReconcileLinks(ctx, ref.TeamID); err != nil {
			if swarm.IsDockerUnavailable(err) {
				return err
			}
			p.Log.WarnContext(ctx, "reconcile links", "team", ref.TeamID, "error", err)
		}
	}
	return nil
}

func (w *ReconcileWorker) repair(ctx context.Context, ref store.DeploymentRef) error {
	_, err := w.Reconcile(ctx, ref.TeamID, ref.ID)
	return err
}

// Reconcile brings the environment of a succeeded deployment back to it.
func (w *ReconcileWorker) Reconcile(ctx context.Context, teamID, deploymentID string) ([]Repaired, error) {
	p := w.Pipeline
	p.defaults()
	d, err := p.Store.GetDeployment(ctx, teamID, deploymentID)
	if err != nil {
		return nil, err
	}
	if d.State != store.StateSucceeded {
		return nil, errors.New("only succeeded deployments are maintained")
	}
	r, err := p.newRun(ctx, d)
	if err != nil {
		return nil, err
	}
	if r.env.DeletingAt != nil {
		return nil, nil // a preview being deleted is torn down, not repaired
	}
	if err := r.loadRendered(); err != nil {
		return nil, err
	}
	if r.desired, err = r.buildDesired(ctx); err != nil {
		return nil, err
	}
	observed, err := p.Driver.Observe(ctx, r.envRef())
	if err != nil {
		return nil, err
	}
	actions, err := swarm.Plan(observed, r.desired)
	if err != nil {
		return nil, err
	}
	var repaired []Repaired
	ensured := false
	for _, a := range actions {
		if a.Kind != swarm.KindService || a.Service == "" || a.Op == swarm.OpRemove {
			continue
		}
		svc, ok := r.desired.Service(a.Service)
		if !ok {
			continue // a job run: repair never runs jobs
		}
		if !ensured {
			if err := r.ensureObjects(ctx); err != nil {
				return repaired, err
			}
			ensured = true
		}
		if _, err := p.Driver.UpdateService(ctx, svc); err != nil {
			p.Metrics.DriftRepaired("failed")
			return repaired, err
		}
		p.Metrics.DriftRepaired("repaired")
		repaired = append(repaired, Repaired{Service: a.Service, Drift: a.Drift})
		if w.OnRepair != nil {
			w.OnRepair(a.Service, a.Drift)
		}
		r.event(ctx, "drift.repaired", map[string]any{"service": a.Service, "op": string(a.Op), "drift": a.Drift})
	}
	return repaired, nil
}
