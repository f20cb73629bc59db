package service

import (
	"context"
	"errors"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/store"
)

// PreviewDeployer is the GitHub pull-request flow's way in to previews
// (jobs.PreviewDeployer): previews of the pull request's branch, without a
// slot, acting as "github".
type PreviewDeployer struct {
	Previews *Previews
	// Enqueue inserts jobs in the caller's transaction; the worker passes
	// its River client's InsertTx.
	Enqueue Enqueue
}

var _ jobs.PreviewDeployer = PreviewDeployer{}

// previewActor is who the pull-request flow acts as in events.
const previewActor = "github"

// EnsurePreview creates the preview of branch when missing and deploys it
// at headSHA. A deployment of headSHA that is requested, running or
// succeeded is returned instead of requesting another, so a retried job
// deploys once. A local snapshot (slipway preview deploy --local) whose
// branch is still at the head listed when it was deployed is returned
// too: only a push that moves the branch, or first pushes it, replaces it.
// Background sync (SyncPreview) shares these rules, so a head the pull
// request deployed is not deployed again on push, nor the other way
// round. Previews of pull/<n>/head refs (forks) are untrusted.
func (d PreviewDeployer) EnsurePreview(ctx context.Context, teamID, appID, branch, headSHA string) (string, error) {
	p := d.Previews
	if err := checkPreviewRequest(PreviewRequest{Branch: branch}); err != nil {
		return "", err
	}
	var depID string
	err := p.Store.WithTx(ctx, func(tx *store.Store) error {
		pv, err := existingPreview(ctx, tx, teamID, appID, branch, "")
		if errors.Is(err, store.ErrNotFound) {
			// Created and deployed below in the same transaction: create
			// joins it (WithTx on a transaction store nests as a savepoint).
			txp := *p
			txp.Store = tx
			if pv, err = txp.create(ctx, teamID, previewActor, d.Enqueue, appID, PreviewRequest{Branch: branch}); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		_, rev, err := repositoryApplication(ctx, tx, teamID, appID)
		if err != nil {
			return err
		}
		dep, _, err := deployPushedHead(ctx, tx, teamID, previewActor, d.Enqueue, pv, rev.Revision, headSHA)
		depID = dep.ID
		return err
	})
	return depID, err
}

// DeletePreview starts deleting the preview of branch (no slot); a
// missing preview, or one already being deleted, is fine.
func (d PreviewDeployer) DeletePreview(ctx context.Context, teamID, appID, branch string) error {
	p := d.Previews
	return p.Store.WithTx(ctx, func(tx *store.Store) error {
		env, err := tx.GetPreview(ctx, teamID, appID, branch, "")
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = p.markDeleting(ctx, tx, teamID, previewActor, d.Enqueue, env)
		return err
	})
}

var _ jobs.PreviewSyncer = PreviewDeployer{}

// SyncPreview is background sync's way in (jobs.PreviewSyncer): it
// redeploys the preview at the branch head sync listed, as actor
// (sync:poll or sync:webhook), with the pull-request flow's rules. It
// never creates a preview, and leaves alone one being deleted. requested
// is false when nothing new was requested: the head is deployed already,
// or a local snapshot stays.
func (d PreviewDeployer) SyncPreview(ctx context.Context, tx *store.Store, enqueue func(context.Context, *store.Store, river.JobArgs) error, preview store.Environment, head, actor string) (store.Deployment, bool, error) {
	env, err := tx.GetPreviewBySlug(ctx, preview.TeamID, preview.ApplicationID, preview.Slug)
	if err != nil {
		return store.Deployment{}, false, err
	}
	if env.DeletingAt != nil {
		return store.Deployment{}, false, nil
	}
	pv, err := withLatestDeployment(ctx, tx, env)
	if err != nil {
		return store.Deployment{}, false, err
	}
	_, rev, err := repositoryApplication(ctx, tx, env.TeamID, env.ApplicationID)
	if err != nil {
		return store.Deployment{}, false, err
	}
	return deployPushedHead(ctx, tx, env.TeamID, actor, enqueue, pv, rev.Revision, head)
}

// deployPushedHead requests a deployment of pv at headSHA, the branch head
// a push brought, unless that is not needed: a local snapshot stays while
// the branch is at the head recorded with it, and a deployment of headSHA
// that is requested, running or succeeded is returned instead of a new
// one. The head is recorded as requested (the sync rule "each head
// once"), so the pull-request flow and background sync never both deploy
// it. requested tells whether a deployment was requested.
func deployPushedHead(ctx context.Context, tx *store.Store, teamID, actor string, enqueue Enqueue, pv Preview, revision int64, headSHA string) (store.Deployment, bool, error) {
	if pv.Deployment != nil {
		// A local snapshot stays until the branch moves (the spec's
		// local worktrees): the pull request reports it instead.
		keep, err := keepsLocalSnapshot(ctx, tx, *pv.Deployment, headSHA)
		if err != nil || keep {
			return *pv.Deployment, false, err
		}
		if s := pv.Deployment.State; s != store.StateFailed && s != store.StateCancelled && s != store.StateSuperseded {
			if ref, err := tx.GetDeploymentRef(ctx, teamID, pv.Deployment.ID); err == nil && ref.Commit == headSHA {
				return *pv.Deployment, false, tx.MarkSyncRequested(ctx, teamID, pv.Environment.ID, headSHA)
			}
		}
	}
	dep, err := requestPreviewDeployment(ctx, tx, teamID, actor, enqueue, pv.Environment, revision, headSHA)
	if err != nil {
		return dep, false, err
	}
	return dep, true, tx.MarkSyncRequested(ctx, teamID, pv.Environment.ID, headSHA)
}
