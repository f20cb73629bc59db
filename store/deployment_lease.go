package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrLeaseHeld is returned by AcquireDeploymentLease while another worker
// holds a live lease on the deployment.
var ErrLeaseHeld = errors.New("deployment is being worked on by another worker")

// AcquireDeploymentLease makes owner the only worker advancing the
// deployment until the lease expires. A worker that dies stops renewing its
// lease; once it expires the deployment can be resumed by another one
// (ListOrphanedDeployments). Renewing is acquiring again with the same
// owner.
func (s *Store) AcquireDeploymentLease(ctx context.Context, teamID, id, owner string, ttl time.Duration) error {
	tag, err := s.db.Exec(ctx, `
		UPDATE deployments SET lease_owner = $3, lease_expires_at = now() + $4::interval
		WHERE team_id = $1 AND id = $2
		  AND (lease_owner IS NULL OR lease_owner = $3 OR lease_expires_at < now())`,
		teamID, id, owner, ttl.String())
	if err != nil {
		return wrap("acquire deployment lease", err)
	}
	if tag.RowsAffected() == 0 {
		if _, err := s.GetDeployment(ctx, teamID, id); err != nil {
			return err
		}
		return fmt.Errorf("acquire deployment lease: %w", ErrLeaseHeld)
	}
	return nil
}

// ReleaseDeploymentLease gives the lease up, if owner still holds it.
func (s *Store) ReleaseDeploymentLease(ctx context.Context, teamID, id, owner string) error {
	_, err := s.db.Exec(ctx, `
		UPDATE deployments SET lease_owner = NULL, lease_expires_at = NULL
		WHERE team_id = $1 AND id = $2 AND lease_owner = $3`, teamID, id, owner)
	return wrap("release deployment lease", err)
}

// DeploymentRef names a deployment across teams, for maintenance jobs.
type DeploymentRef struct {
	TeamID string
	ID     string
	// Resumes counts how often the deployment was resumed after its
	// worker died.
	Resumes int
}

// ListOrphanedDeployments returns live deployments whose worker's lease
// expired: the worker died mid-step. It spans teams (a maintenance method)
// and marks each one resumed, so concurrent callers resume it once.
func (s *Store) ListOrphanedDeployments(ctx context.Context) ([]DeploymentRef, error) {
	rows, err := s.db.Query(ctx, `
		UPDATE deployments SET resumes = resumes + 1, lease_owner = NULL, lease_expires_at = NULL
		WHERE id IN (
			SELECT id FROM deployments
			WHERE state IN ('capturing', 'preparing', 'running_jobs', 'rolling_out')
			  AND lease_owner IS NOT NULL AND lease_expires_at < now()
			FOR UPDATE SKIP LOCKED)
		RETURNING team_id, id, resumes`)
	if err != nil {
		return nil, wrap("list orphaned deployments", err)
	}
	refs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (DeploymentRef, error) {
		var r DeploymentRef
		err := row.Scan(&r.TeamID, &r.ID, &r.Resumes)
		return r, err
	})
	return refs, wrap("list orphaned deployments", err)
}

// EarlierLiveDeployment returns the oldest live deployment of the
// environment created before the given one, or ErrNotFound: deployments of
// one environment run one at a time, in the order they were requested.
func (s *Store) EarlierLiveDeployment(ctx context.Context, teamID, environmentID, id string) (Deployment, error) {
	d, err := scanDeployment(s.db.QueryRow(ctx, `
		SELECT `+deploymentColumns+` FROM deployments
		WHERE team_id = $1 AND environment_id = $2 AND id <> $3
		  AND state IN ('capturing', 'preparing', 'running_jobs', 'rolling_out')
		  AND created_at <= (SELECT created_at FROM deployments WHERE team_id = $1 AND id = $3)
		ORDER BY created_at LIMIT 1`, teamID, environmentID, id))
	return d, wrap("find earlier live deployment", err)
}

// ListMaintainedDeployments returns, for every environment, the deployment
// drift repair maintains: its latest successful one, when that is also its
// latest finished one, nothing is deploying it now and its application is
// not deleted. It spans teams (a
// maintenance method for the reconciler).
func (s *Store) ListMaintainedDeployments(ctx context.Context) ([]DeploymentRef, error) {
	rows, err := s.db.Query(ctx, `
		SELECT latest.team_id, latest.id, 0 FROM (
			SELECT DISTINCT ON (environment_id) team_id, id, environment_id, state
			FROM deployments
			WHERE state IN ('succeeded', 'failed')
			ORDER BY environment_id, finished_at DESC
		) latest
		WHERE latest.state = 'succeeded'
		  AND EXISTS (
			SELECT 1 FROM applications a
			JOIN deployments d ON d.team_id = a.team_id AND d.application_id = a.id
			WHERE d.team_id = latest.team_id AND d.id = latest.id AND a.deleted_at IS NULL)
		  AND NOT EXISTS (
			SELECT 1 FROM deployments live
			WHERE live.team_id = latest.team_id AND live.environment_id = latest.environment_id
			  AND live.state IN ('requested', 'capturing', 'preparing', 'running_jobs', 'rolling_out'))`)
	if err != nil {
		return nil, wrap("list maintained deployments", err)
	}
	refs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (DeploymentRef, error) {
		var r DeploymentRef
		err := row.Scan(&r.TeamID, &r.ID, &r.Resumes)
		return r, err
	})
	return refs, wrap("list maintained deployments", err)
}

// ListRetainedDeploymentSteps returns the progress records of the
// deployments whose images must stay: every live one, and each
// environment's latest perEnvironment succeeded ones (what runs, what a
// rollback or restore would bring back, and the releases promotions
// receive). It spans teams (a maintenance method for image cleanup).
func (s *Store) ListRetainedDeploymentSteps(ctx context.Context, perEnvironment int) ([]json.RawMessage, error) {
	rows, err := s.db.Query(ctx, `
		SELECT steps FROM deployments
		WHERE state IN ('requested', 'capturing', 'preparing', 'running_jobs', 'rolling_out')
		UNION ALL
		SELECT steps FROM (
			SELECT steps, row_number() OVER (PARTITION BY environment_id ORDER BY finished_at DESC) AS n
			FROM deployments WHERE state = 'succeeded'
		) recent WHERE n <= $1`, perEnvironment)
	if err != nil {
		return nil, wrap("list retained deployment steps", err)
	}
	steps, err := pgx.CollectRows(rows, pgx.RowTo[json.RawMessage])
	return steps, wrap("list retained deployment steps", err)
}
