package store

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
)

// likePattern makes s a LIKE/ILIKE pattern matching s anywhere, with its own
// %, _ and \ taken literally.
func likePattern(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}

// SearchApplications returns the team's applications whose name contains
// query, case-insensitively, by name; an empty query returns them all.
func (s *Store) SearchApplications(ctx context.Context, teamID, query string) ([]Application, error) {
	if query == "" {
		return s.ListApplications(ctx, teamID)
	}
	rows, err := s.db.Query(ctx, `
		SELECT `+applicationColumns+` FROM applications
		WHERE team_id = $1 AND deleted_at IS NULL AND name ILIKE $2 ESCAPE '\'
		ORDER BY name`, teamID, likePattern(query))
	if err != nil {
		return nil, wrap("search applications", err)
	}
	as, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Application, error) { return scanApplication(r) })
	return as, wrap("search applications", err)
}

// DeploymentCommits returns the commit each of the given deployments read,
// by deployment id: the commit it fetched from the repository, else its
// one-off ref's commit, else its local snapshot's. Deployments without one
// are absent.
func (s *Store) DeploymentCommits(ctx context.Context, teamID string, deploymentIDs []string) (map[string]string, error) {
	rows, err := s.db.Query(ctx, `
		SELECT d.id, coalesce(
			nullif((SELECT f.commit FROM deployment_fetches f WHERE f.team_id = d.team_id AND f.deployment_id = d.id), ''),
			nullif((SELECT r.commit FROM deployment_refs r WHERE r.team_id = d.team_id AND r.deployment_id = d.id), ''),
			nullif((SELECT n.commit FROM deployment_snapshots n WHERE n.team_id = d.team_id AND n.deployment_id = d.id), ''),
			'')
		FROM deployments d
		WHERE d.team_id = $1 AND d.id = ANY($2)`, teamID, deploymentIDs)
	if err != nil {
		return nil, wrap("deployment commits", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, commit string
		if err := rows.Scan(&id, &commit); err != nil {
			return nil, wrap("deployment commits", err)
		}
		if commit != "" {
			out[id] = commit
		}
	}
	return out, wrap("deployment commits", rows.Err())
}
