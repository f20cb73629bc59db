package pipeline

import (
	"context"
	"errors"

	"github.com/slipwayhq/slipway/store"
)

// snapshotBundle returns the local snapshot bundle deploymentID deploys
// (slipway preview deploy --local); nil for a deployment of a pushed
// commit. The manifest and `self` sources are read from it, never fetched.
func (r *run) snapshotBundle(ctx context.Context, deploymentID string) ([]byte, error) {
	snap, err := r.p.Store.GetDeploymentSnapshot(ctx, r.d.TeamID, deploymentID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return snap.Bundle, err
}

// selfSnapshot is the snapshot bundle of the deployment whose repository
// read this one uses (its own, or the one it restores), for building
// `repository = "self"` services at a snapshot commit.
func (r *run) selfSnapshot(ctx context.Context) ([]byte, error) {
	f, err := r.sourceFetch(ctx)
	if err != nil {
		return nil, err
	}
	return r.snapshotBundle(ctx, f.DeploymentID)
}
