package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// A release is derived, not stored: every succeeded deployment of a
// (non-preview) environment whose origin is build is one, and its id is
// the deployment's id. Promotions record the deployment they received in
// promoted_from, so a release's receivers are the deployments reachable
// from it through promoted_from (chains such as staging → canary →
// production included).

// Release is a succeeded build deployment other environments can receive.
type Release struct {
	Deployment
	EnvironmentName string
	Receivers       []ReleaseReceiver
}

// ReleaseReceiver is a deployment that received a release, directly or
// through a chain of promotions.
type ReleaseReceiver struct {
	DeploymentID    string
	EnvironmentID   string
	EnvironmentName string
	State           DeploymentState
	Origin          Origin
	PromotedFrom    string
	CreatedAt       time.Time
}

const releaseWhere = `state = 'succeeded' AND origin = 'build'
	AND environment_id IN (SELECT id FROM environments WHERE kind = 'environment')`

// ListReleases returns the application's releases, newest first, each with
// who received it. Limit defaults to 50 and is capped at 500.
func (s *Store) ListReleases(ctx context.Context, teamID, applicationID string, limit int) ([]Release, error) {
	const op = "list releases"
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 500)
	rows, err := s.db.Query(ctx, `
		SELECT `+deploymentColumns+`
		FROM deployments
		WHERE team_id = $1 AND application_id = $2 AND `+releaseWhere+`
		ORDER BY finished_at DESC, id DESC
		LIMIT $3`, teamID, applicationID, limit)
	if err != nil {
		return nil, wrap(op, err)
	}
	ds, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Deployment, error) { return scanDeployment(r) })
	if err != nil {
		return nil, wrap(op, err)
	}
	out := make([]Release, 0, len(ds))
	for _, d := range ds {
		r, err := s.releaseOf(ctx, d)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// GetRelease returns one of the team's releases; a deployment that is not
// a release is ErrNotFound.
func (s *Store) GetRelease(ctx context.Context, teamID, id string) (Release, error) {
	d, err := scanDeployment(s.db.QueryRow(ctx, `
		SELECT `+deploymentColumns+` FROM deployments
		WHERE team_id = $1 AND id = $2 AND `+releaseWhere, teamID, id))
	if err != nil {
		return Release{}, wrap("get release", err)
	}
	return s.releaseOf(ctx, d)
}

// ReleaseOf follows a deployment's promoted_from and restored_from links
// back to the build deployment whose images it runs. ErrNotFound when
// the chain does not end at a release.
func (s *Store) ReleaseOf(ctx context.Context, teamID, deploymentID string) (Release, error) {
	var id string
	err := s.db.QueryRow(ctx, `
		WITH RECURSIVE chain(id, origin, next, depth) AS (
			SELECT id, origin, coalesce(promoted_from, restored_from), 0 FROM deployments WHERE team_id = $1 AND id = $2
			UNION ALL
			SELECT d.id, d.origin, coalesce(d.promoted_from, d.restored_from), c.depth + 1
			FROM deployments d JOIN chain c ON d.id = c.next
			WHERE d.team_id = $1 AND c.origin <> 'build' AND c.depth < 1000
		)
		SELECT id FROM chain WHERE origin = 'build' ORDER BY depth LIMIT 1`, teamID, deploymentID).Scan(&id)
	if err != nil {
		return Release{}, wrap("release of deployment", err)
	}
	return s.GetRelease(ctx, teamID, id)
}

func (s *Store) releaseOf(ctx context.Context, d Deployment) (Release, error) {
	const op = "release receivers"
	r := Release{Deployment: d}
	if err := s.db.QueryRow(ctx, `SELECT name FROM environments WHERE id = $1`, d.EnvironmentID).Scan(&r.EnvironmentName); err != nil {
		return Release{}, wrap(op, err)
	}
	rows, err := s.db.Query(ctx, `
		WITH RECURSIVE received(id, depth) AS (
			SELECT id, 0 FROM deployments WHERE team_id = $1 AND promoted_from = $2
			UNION ALL
			SELECT d.id, r.depth + 1 FROM deployments d JOIN received r ON d.promoted_from = r.id
			WHERE d.team_id = $1 AND r.depth < 1000
		)
		SELECT d.id, d.environment_id, e.name, d.state, d.origin, coalesce(d.promoted_from, ''), d.created_at
		FROM received r JOIN deployments d ON d.id = r.id JOIN environments e ON e.id = d.environment_id
		ORDER BY d.created_at, d.id`, d.TeamID, d.ID)
	if err != nil {
		return Release{}, wrap(op, err)
	}
	r.Receivers, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (ReleaseReceiver, error) {
		var x ReleaseReceiver
		err := row.Scan(&x.DeploymentID, &x.EnvironmentID, &x.EnvironmentName, &x.State, &x.Origin, &x.PromotedFrom, &x.CreatedAt)
		return x, err
	})
	return r, wrap(op, err)
}

// LatestFinishedDeployment returns the environment's most recently
// finished deployment, whatever its outcome (superseded requests, which
// never ran, aside).
func (s *Store) LatestFinishedDeployment(ctx context.Context, teamID, environmentID string) (Deployment, error) {
	d, err := scanDeployment(s.db.QueryRow(ctx, `
		SELECT `+deploymentColumns+` FROM deployments
		WHERE team_id = $1 AND environment_id = $2 AND state IN ('succeeded', 'failed', 'cancelled')
		ORDER BY finished_at DESC, id DESC
		LIMIT 1`, teamID, environmentID))
	return d, wrap("latest finished deployment", err)
}

// LiveDeployment returns a deployment of the environment that has not
// finished, ErrNotFound when there is none.
func (s *Store) LiveDeployment(ctx context.Context, teamID, environmentID string) (Deployment, error) {
	d, err := scanDeployment(s.db.QueryRow(ctx, `
		SELECT `+deploymentColumns+` FROM deployments
		WHERE team_id = $1 AND environment_id = $2
		  AND state IN ('requested', 'capturing', 'preparing', 'running_jobs', 'rolling_out')
		ORDER BY created_at DESC, id DESC
		LIMIT 1`, teamID, environmentID))
	return d, wrap("live deployment", err)
}
