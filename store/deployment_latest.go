package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// EnvironmentDeployments sums an environment's deployments up for lists:
// its newest one, and whether any ever succeeded (a failed attempt after
// a success left the previous release running).
type EnvironmentDeployments struct {
	Latest        Deployment
	EverSucceeded bool
}

// LatestDeploymentPerEnvironment returns, by environment id and in one
// query, the newest deployment of every environment of the team that has
// one; environments never deployed are absent.
func (s *Store) LatestDeploymentPerEnvironment(ctx context.Context, teamID string) (map[string]EnvironmentDeployments, error) {
	rows, err := s.db.Query(ctx, `
		SELECT DISTINCT ON (environment_id) `+deploymentColumns+`,
			EXISTS (SELECT 1 FROM deployments ok
				WHERE ok.team_id = d.team_id AND ok.environment_id = d.environment_id AND ok.state = 'succeeded')
		FROM deployments d
		WHERE team_id = $1
		ORDER BY environment_id, created_at DESC, id DESC`, teamID)
	if err != nil {
		return nil, wrap("latest deployment per environment", err)
	}
	defer rows.Close()
	out := map[string]EnvironmentDeployments{}
	for rows.Next() {
		var e EnvironmentDeployments
		d, err := scanDeployment(withTrailing{rows, []any{&e.EverSucceeded}})
		if err != nil {
			return nil, wrap("latest deployment per environment", err)
		}
		e.Latest = d
		out[d.EnvironmentID] = e
	}
	return out, wrap("latest deployment per environment", rows.Err())
}

// ListTeamEnvironments returns every environment and preview of the
// team's applications, by application, then as ListEnvironments orders them.
func (s *Store) ListTeamEnvironments(ctx context.Context, teamID string) ([]Environment, error) {
	rows, err := s.db.Query(ctx, `
		SELECT `+environmentColumns+` FROM environments
		WHERE team_id = $1
		ORDER BY application_id, kind, name`, teamID)
	if err != nil {
		return nil, wrap("list team environments", err)
	}
	es, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Environment, error) { return scanEnvironment(r) })
	return es, wrap("list team environments", err)
}

// withTrailing scans a row whose leading columns a scan function reads
// into extra destinations for the columns after them.
type withTrailing struct {
	pgx.Row
	extra []any
}

func (r withTrailing) Scan(dest ...any) error { return r.Row.Scan(append(dest, r.extra...)...) }
