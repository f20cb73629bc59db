package store

import (
	"context"
)

// DeploymentSnapshot is the local worktree snapshot a deployment deploys
// (slipway preview deploy --local): the snapshot commit, the base commit
// it was taken on, and the git bundle carrying it.
type DeploymentSnapshot struct {
	DeploymentID string
	Commit       string
	Base         string
	Bundle       []byte
}

// RecordDeploymentSnapshot stores the snapshot a requested deployment
// deploys.
func (s *Store) RecordDeploymentSnapshot(ctx context.Context, teamID string, snap DeploymentSnapshot) error {
	return s.execOne(ctx, "record deployment snapshot", `
		INSERT INTO deployment_snapshots (deployment_id, team_id, commit, base, bundle)
		SELECT id, team_id, $3, $4, $5 FROM deployments WHERE team_id = $1 AND id = $2`,
		teamID, snap.DeploymentID, snap.Commit, snap.Base, snap.Bundle)
}

// GetDeploymentSnapshot returns the deployment's snapshot with its
// bundle, or ErrNotFound for a deployment of a pushed commit.
func (s *Store) GetDeploymentSnapshot(ctx context.Context, teamID, deploymentID string) (DeploymentSnapshot, error) {
	snap := DeploymentSnapshot{DeploymentID: deploymentID}
	err := s.db.QueryRow(ctx, `
		SELECT commit, base, bundle FROM deployment_snapshots WHERE team_id = $1 AND deployment_id = $2`,
		teamID, deploymentID).Scan(&snap.Commit, &snap.Base, &snap.Bundle)
	return snap, wrap("get deployment snapshot", err)
}

// DeploymentSnapshotCommits returns the snapshot and base commits of a
// deployment without its bundle, or ErrNotFound.
func (s *Store) DeploymentSnapshotCommits(ctx context.Context, teamID, deploymentID string) (commit, base string, err error) {
	err = s.db.QueryRow(ctx, `
		SELECT commit, base FROM deployment_snapshots WHERE team_id = $1 AND deployment_id = $2`,
		teamID, deploymentID).Scan(&commit, &base)
	return commit, base, wrap("get deployment snapshot commits", err)
}
