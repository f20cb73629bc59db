package store

import (
	"context"
	"errors"
	"fmt"
)

// ErrSnapshotsUnavailable: the database has no deployment_snapshots table
// yet (migration 0012 is still pending in this tree).
var ErrSnapshotsUnavailable = errors.New("local previews need migration 0012 (deployment_snapshots)")

// snapshotsAvailable tells whether migration 0012 created the table. It
// is checked before each query because a query on a missing table would
// abort the surrounding transaction. Remove once 0012 is in sequence.
func (s *Store) snapshotsAvailable(ctx context.Context) (bool, error) {
	var ok bool
	err := s.db.QueryRow(ctx, `SELECT to_regclass('deployment_snapshots') IS NOT NULL`).Scan(&ok)
	return ok, wrap("check deployment snapshots", err)
}

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
	if ok, err := s.snapshotsAvailable(ctx); !ok || err != nil {
		return errors.Join(ErrSnapshotsUnavailable, err)
	}
	return s.execOne(ctx, "record deployment snapshot", `
		INSERT INTO deployment_snapshots (deployment_id, team_id, commit, base, bundle)
		SELECT id, team_id, $3, $4, $5 FROM deployments WHERE team_id = $1 AND id = $2`,
		teamID, snap.DeploymentID, snap.Commit, snap.Base, snap.Bundle)
}

// GetDeploymentSnapshot returns the deployment's snapshot with its
// bundle, or ErrNotFound for a deployment of a pushed commit.
func (s *Store) GetDeploymentSnapshot(ctx context.Context, teamID, deploymentID string) (DeploymentSnapshot, error) {
	snap := DeploymentSnapshot{DeploymentID: deploymentID}
	if ok, err := s.snapshotsAvailable(ctx); !ok || err != nil {
		return snap, missingSnapshot("get deployment snapshot", err)
	}
	err := s.db.QueryRow(ctx, `
		SELECT commit, base, bundle FROM deployment_snapshots WHERE team_id = $1 AND deployment_id = $2`,
		teamID, deploymentID).Scan(&snap.Commit, &snap.Base, &snap.Bundle)
	return snap, wrap("get deployment snapshot", err)
}

// DeploymentSnapshotCommits returns the snapshot and base commits of a
// deployment without its bundle, or ErrNotFound.
func (s *Store) DeploymentSnapshotCommits(ctx context.Context, teamID, deploymentID string) (commit, base string, err error) {
	if ok, err := s.snapshotsAvailable(ctx); !ok || err != nil {
		return "", "", missingSnapshot("get deployment snapshot commits", err)
	}
	err = s.db.QueryRow(ctx, `
		SELECT commit, base FROM deployment_snapshots WHERE team_id = $1 AND deployment_id = $2`,
		teamID, deploymentID).Scan(&commit, &base)
	return commit, base, wrap("get deployment snapshot commits", err)
}

// missingSnapshot: without the table no deployment has a snapshot.
func missingSnapshot(op string, err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("%s: %w", op, ErrNotFound)
}
