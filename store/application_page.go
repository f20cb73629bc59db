package store

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
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
// how many match across all pages: in one statement, and a second one
// only to count for a page past the end (which is empty).
func (s *Store) ListApplicationPage(ctx context.Context, teamID string, q ApplicationQuery) (ApplicationPage, error) {
	const op = "list application page"
	pattern := ""
	if q.Name != "" {
		pattern = likePattern(q.Name)
	}
	args := []any{teamID, pattern, q.State, q.After}
	rows, err := s.db.Query(ctx, `
		SELECT `+applicationColumns+`, count(*) OVER ()
		FROM applications a WHERE `+applicationQueryWhere+`
		ORDER BY name LIMIT $5 OFFSET $6`, append(args, q.Limit, q.Offset)...)
	if err != nil {
		return ApplicationPage{}, wrap(op, err)
	}
	var page ApplicationPage
	page.Applications, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Application, error) {
		return scanApplication(withTrailing{r, []any{&page.Total}})
	})
	if err != nil || len(page.Applications) > 0 || q.Offset == 0 {
		return page, wrap(op, err)
	}
	err = s.db.QueryRow(ctx, `SELECT count(*) FROM applications a WHERE `+applicationQueryWhere, args...).Scan(&page.Total)
	return page, wrap(op, err)
}

// applicationQueryWhere selects the applications of team $1 that an
// ApplicationQuery keeps: name pattern $2 ("" for any), an environment in
// state $3 ("" for any), a name after $4 ("" for any).
var applicationQueryWhere = `a.team_id = $1 AND a.deleted_at IS NULL
	AND ($2 = '' OR a.name ILIKE $2 ESCAPE '\')
	AND ($4 = '' OR a.name > $4)
	AND ($3 = '' OR EXISTS (
		SELECT 1 FROM environments e
		LEFT JOIN LATERAL (
			SELECT state FROM deployments
			WHERE team_id = $1 AND environment_id = e.id
			ORDER BY created_at DESC, id DESC
			LIMIT 1) d ON true
		WHERE e.team_id = $1 AND e.application_id = a.id AND e.kind = 'environment'
			AND ` + environmentStateSQL("d.state", everSucceededSQL("e.id")) + ` = $3))`

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
