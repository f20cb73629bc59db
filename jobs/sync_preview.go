package jobs

import (
	"context"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/store"
)

// PreviewSyncer redeploys a preview at a branch head sync listed (the
// preview machinery implements it, with the rules the pull-request flow
// uses: a local snapshot stays until its branch moves, and a head already
// requested there is not requested again). It runs in sync's transaction
// tx and inserts jobs with enqueue. requested is false when nothing new
// was requested.
type PreviewSyncer interface {
	SyncPreview(ctx context.Context, tx *store.Store, enqueue func(context.Context, *store.Store, river.JobArgs) error,
		preview store.Environment, head, actor string) (d store.Deployment, requested bool, err error)
}

// requestSyncDeployment requests the deployment of head for the target,
// in tx: an environment gets a build deployment reading exactly head; a
// preview goes through the preview machinery. ok is false when none was
// requested (a preview that keeps its local snapshot, or whose head was
// requested by its pull request already, or no preview machinery).
func (w *SyncWorker) requestSyncDeployment(ctx context.Context, tx *store.Store, t store.SyncTarget, branch, head, actor string) (d store.Deployment, ok bool, err error) {
	if t.Environment.Kind == store.KindPreview {
		if w.Previews == nil {
			return d, false, nil
		}
		return w.Previews.SyncPreview(ctx, tx, w.Enqueue, t.Environment, head, actor)
	}
	d, err = tx.CreateDeployment(ctx, t.TeamID, store.DeploymentParams{
		EnvironmentID: t.Environment.ID, Revision: t.Revision, Origin: store.OriginBuild, Actor: actor,
	})
	if err != nil {
		return d, false, err
	}
	// The deployment reads exactly the head sync saw, even if the
	// branch moves again before it captures.
	if err := tx.SetDeploymentRef(ctx, t.TeamID, d.ID, store.GitRef{Branch: branch, Commit: head}); err != nil {
		return d, false, err
	}
	if err := tx.MarkSyncRequested(ctx, t.TeamID, t.Environment.ID, head); err != nil {
		return d, false, err
	}
	return d, true, w.Enqueue(ctx, tx, DeployArgs{TeamID: t.TeamID, DeploymentID: d.ID})
}
