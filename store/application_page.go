package store

import (
	"context"
	"strings"
	"time"
)

// ApplicationQuery selects a page of a team's applications, by name.
type ApplicationQuery struct {
	// Name keeps the applications whose name contains it,
	// case-insensitively; "" keeps all.
	Name string
	// State keeps the applications with an environment (not a preview)
	// in that state (one of EnvironmentStates); "" keeps all.
	State string
	// After keeps the applications whose name sorts after it (a keyset
	// cursor: the last name of the previous page); "" keeps all.
	After string
	// Limit is the page's size (at least 1); Offset how many matching
	// applications come before it.
	Limit, Offset int
}

// ApplicationPage is a page of applications and how many match in all
// (after the After cursor, when there is one).
type ApplicationPage struct {
	Applications []Application
	Total        int
}

// ListApplicationPage returns a page of the team's applications as q
// selects them, ordered by name (unique among a team's applications), and
// how many match across all pages, in one statement. A page past the end
// is empty, with the total.
func (s *Store) ListApplicationPage(ctx context.Context, teamID string, q ApplicationQuery) (ApplicationPage, error) {
	const op = "list application page"
	pattern := ""
	if q.Name != "" {
		pattern = likePattern(q.Name)
	}
	// The count is a one-row relation the page is joined to, so a page past
	// the end still says how many match.
	rows, err := s.db.Query(ctx, `
		WITH matching AS MATERIALIZED (
			SELECT `+applicationColumns+` FROM applications a
			WHERE a.team_id = $1 AND a.deleted_at IS NULL
				AND ($2 = '' OR a.name ILIKE $2 ESCAPE '\')
				AND ($6 = '' OR a.name > $6)
				AND ($3 = '' OR EXISTS (
					SELECT 1 FROM environments e
					LEFT JOIN LATERAL (
						SELECT state FROM deployments
						WHERE team_id = $1 AND environment_id = e.id
						ORDER BY created_at DESC, id DESC
						LIMIT 1) d ON true
					WHERE e.team_id = $1 AND e.application_id = a.id AND e.kind = 'environment'
						AND `+environmentStateSQL("d.state", everSucceededSQL("e.id"))+` = $3))
		)
		SELECT total.n, p.id, p.team_id, p.name, p.current_revision, p.created_at, p.updated_at
		FROM (SELECT count(*) AS n FROM matching) total
		LEFT JOIN LATERAL (SELECT * FROM matching ORDER BY name LIMIT $4 OFFSET $5) p ON true
		ORDER BY p.name`, teamID, pattern, q.State, q.Limit, q.Offset, q.After)
	if err != nil {
		return ApplicationPage{}, wrap(op, err)
	}
	defer rows.Close()
	var page ApplicationPage
	for rows.Next() {
		var id, team, name *string
		var revision *int64
		var created, updated *time.Time
		if err := rows.Scan(&page.Total, &id, &team, &name, &revision, &created, &updated); err != nil {
			return ApplicationPage{}, wrap(op, err)
		}
		if id == nil {
			continue // the count's row when the page is empty
		}
		page.Applications = append(page.Applications, Application{
			ID: *id, TeamID: *team, Name: *name, CurrentRevision: *revision, CreatedAt: *created, UpdatedAt: *updated})
	}
	return page, wrap(op, rows.Err())
}

// EnvironmentStates are what an environment's deployments say of it:
// running (its newest deployment succeeded, or a cancelled or superseded
// one followed a success), deploying (its newest is under way), degraded
// (its newest failed after an earlier success, which still runs), failed
// (it failed and never succeeded) and stopped (never deployed, or nothing
// succeeded and the newest was cancelled or superseded).
var EnvironmentStates = []string{"running", "deploying", "degraded", "failed", "stopped"}

// EnvironmentState is the state of an environment whose newest deployment
// is latest (nil when never deployed) and everSucceeded says whether any
// of its deployments succeeded. environmentStateSQL is the same rule in
// SQL, for queries that filter by it; a test holds them equal.
func EnvironmentState(latest *Deployment, everSucceeded bool) string {
	if latest == nil {
		return "stopped"
	}
	switch {
	case !latest.State.Terminal():
		return "deploying"
	case latest.State == StateSucceeded:
		return "running"
	case latest.State == StateFailed && everSucceeded:
		return "degraded"
	case latest.State == StateFailed:
		return "failed"
	case everSucceeded:
		return "running"
	}
	return "stopped"
}

// terminalStates are the states Terminal reports, for SQL.
var terminalStates = []DeploymentState{StateSucceeded, StateFailed, StateCancelled, StateSuperseded}

// environmentStateSQL is EnvironmentState as a SQL expression over the
// newest deployment's state column (NULL when never deployed) and a
// boolean expression saying whether one ever succeeded.
func environmentStateSQL(latestState, everSucceeded string) string {
	terminal := make([]string, len(terminalStates))
	for i, s := range terminalStates {
		terminal[i] = "'" + string(s) + "'"
	}
	return `(CASE
		WHEN ` + latestState + ` IS NULL THEN 'stopped'
		WHEN ` + latestState + ` NOT IN (` + strings.Join(terminal, ", ") + `) THEN 'deploying'
		WHEN ` + latestState + ` = 'succeeded' THEN 'running'
		WHEN ` + latestState + ` = 'failed' AND ` + everSucceeded + ` THEN 'degraded'
		WHEN ` + latestState + ` = 'failed' THEN 'failed'
		WHEN ` + everSucceeded + ` THEN 'running'
		ELSE 'stopped' END)`
}

// everSucceededSQL says whether the environment whose id is envID (an SQL
// expression) ever had a deployment succeed, in a query whose $1 is the
// team id: one probe of the succeeded deployments' index.
func everSucceededSQL(envID string) string {
	return `EXISTS (SELECT 1 FROM deployments ok
		WHERE ok.team_id = $1 AND ok.environment_id = ` + envID + ` AND ok.state = 'succeeded')`
}
