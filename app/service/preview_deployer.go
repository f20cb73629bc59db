package service

import (
	"context"
	"errors"

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
// deploys once. Previews of pull/<n>/head refs (forks) are untrusted.
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
		if pv.Deployment != nil && pv.Deployment.State != store.StateFailed && pv.Deployment.State != store.StateCancelled &&
			pv.Deployment.State != store.StateSuperseded {
			if ref, err := tx.GetDeploymentRef(ctx, teamID, pv.Deployment.ID); err == nil && ref.Commit == headSHA {
				depID = pv.Deployment.ID
				return nil
			}
		}
		_, rev, err := repositoryApplication(ctx, tx, teamID, appID)
		if err != nil {
			return err
		}
		dep, err := requestPreviewDeployment(ctx, tx, teamID, previewActor, d.Enqueue, pv.Environment, rev.Revision, headSHA)
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
