package pipeline

import (
	"context"
	"errors"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

// finishFailed records the failure and applies the environment's rollback
// policy.
func (r *run) finishFailed(ctx context.Context, f *Failure) error {
	d, err := r.p.transitionTx(ctx, func(tx *store.Store) (store.Deployment, error) {
		return tx.FailDeployment(ctx, r.d.TeamID, r.d.ID, f.Code, f.Message)
	})
	if err != nil {
		if errors.Is(err, store.ErrInvalidTransition) {
			return nil // cancelled or superseded meanwhile
		}
		return err
	}
	r.d = d
	r.observe("failed")
	r.event(ctx, "deployment.failed", map[string]any{"code": f.Code, "message": f.Message})
	if !r.rollsBack(f.Code) {
		return nil
	}
	return r.rollback(ctx)
}

// rollsBack: only a rollout failure of a deployment that is not itself a
// restore, in an environment whose policy is automatic.
func (r *run) rollsBack(code string) bool {
	if code != swarm.CodeRolloutFailed && code != swarm.CodeConvergenceTimeout {
		return false
	}
	if r.d.Origin == store.OriginRollback || r.d.Origin == store.OriginRestore || r.env.Kind == store.KindPreview {
		return false
	}
	return r.rollbackPolicy() == manifest.RollbackAutomatic
}

func (r *run) rollbackPolicy() string {
	if r.rendered != nil {
		if block, ok := r.rendered.Spec.Environments[r.env.Name]; ok && block.Rollback != "" {
			return block.Rollback
		}
	}
	if r.env.Rollback != "" {
		return r.env.Rollback
	}
	if r.env.PromoteFrom != "" {
		return manifest.RollbackAutomatic
	}
	return manifest.RollbackManual
}

// rollback restores the environment's last successful deployment as a new
// deployment, or records why it cannot.
func (r *run) rollback(ctx context.Context) error {
	last, err := r.p.Store.LatestSucceededDeployment(ctx, r.d.TeamID, r.env.ID)
	if errors.Is(err, store.ErrNotFound) {
		r.event(ctx, CodeRollbackUnavailable, map[string]any{"reason": "no earlier deployment of this environment succeeded"})
		return nil
	}
	if err != nil {
		return err
	}
	return r.p.Store.WithTx(ctx, func(tx *store.Store) error {
		nd, err := tx.CreateDeployment(ctx, r.d.TeamID, store.DeploymentParams{
			EnvironmentID: r.env.ID,
			Revision:      last.Revision,
			Origin:        store.OriginRollback,
			RestoredFrom:  last.ID,
			Actor:         "rollback:" + r.d.ID,
		})
		if err != nil {
			return err
		}
		if _, err := tx.RecordEvent(ctx, r.d.TeamID, store.EventParams{
			Actor: "worker", Verb: "deployment.rollback", ObjectType: "deployment", ObjectID: r.d.ID,
			Details: map[string]any{"restores": last.ID, "rollback_deployment": nd.ID},
		}); err != nil {
			return err
		}
		return r.p.queue().Deploy(ctx, tx, r.d.TeamID, nd.ID)
	})
}
