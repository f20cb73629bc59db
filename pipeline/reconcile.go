package pipeline

import (
	"context"
	"errors"

	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

// Repaired is what one reconciliation changed.
type Repaired struct {
	Service string
	Drift   []swarm.Drift
}

// ReconcileAll scans every maintained deployment. One environment's error is logged
// and the scan goes on; repair never runs jobs and never waits for
// convergence. With links on, each team's links are reconciled first, so a
// links_reconcile that failed or never ran (a lost network, a missed
// attachment) is repaired on the next scan too, before services are
// compared with the networks they should join.
func (p *Pipeline) ReconcileAll(ctx context.Context) error {
	refs, err := p.Store.ListMaintainedDeployments(ctx)
	if err != nil {
		return err
	}
	if err := p.reconcileTeamLinks(ctx, refs); err != nil {
		return err
	}
	var unavailable error
	for _, ref := range refs {
		if _, err := p.Reconcile(ctx, ref.TeamID, ref.ID); err != nil {
			if swarm.IsDockerUnavailable(err) {
				unavailable = err
				break
			}
			p.logger().WarnContext(ctx, "reconcile environment", "deployment", ref.ID, "error", err)
		}
	}
	return unavailable
}

// reconcileTeamLinks reconciles the links of every team with a maintained
// deployment. One team's error is logged and the scan goes on; an
// unreachable Docker engine ends it.
func (p *Pipeline) reconcileTeamLinks(ctx context.Context, refs []store.DeploymentRef) error {
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
			p.logger().WarnContext(ctx, "reconcile links", "team", ref.TeamID, "error", err)
		}
	}
	return nil
}

// Reconcile brings the environment of a succeeded deployment back to it.
func (p *Pipeline) Reconcile(ctx context.Context, teamID, deploymentID string) ([]Repaired, error) {
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
	if held, err := p.held(ctx, teamID, r.env.ID); err != nil || held {
		return nil, err // a restore stopped its services on purpose
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
		r.event(ctx, "drift.repaired", map[string]any{"service": a.Service, "op": string(a.Op), "drift": a.Drift})
	}
	return repaired, nil
}
