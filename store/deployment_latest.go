package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvironmentDeployments sums an environment's deployments up for lists:
// its newest one, and whether any ever succeeded (a failed attempt after
// a success left the previous release running).
type EnvironmentDeployments struct {
	// Latest is a summary: its manifests, variables and steps are not
	// read (nil), so a list of many environments stays small.
	Latest        Deployment
	EverSucceeded bool
}

// deploymentSummaryColumns are deploymentColumns without the manifests,
// variables and steps, for lists that show only a deployment's state.
// Every column is named, so the list can be selected from a subquery.
const deploymentSummaryColumns = `id, team_id, application_id, environment_id, state, revision,
	NULL::jsonb AS captured_manifest, NULL::jsonb AS rendered_manifest, NULL::jsonb AS variables,
	spec_hash, origin, coalesce(restored_from, '') AS restored_from,
	coalesce(promoted_from, '') AS promoted_from, actor, error_code, error_message, NULL::jsonb AS steps,
	created_at, updated_at, started_at, finished_at`

// LatestDeploymentPerEnvironment returns, by environment id and in one
// query, a summary of the newest deployment of every environment of the
// team (of applicationID's only, unless it is "") that has one;
// environments never deployed are absent.
func (s *Store) LatestDeploymentPerEnvironment(ctx context.Context, teamID, applicationID string) (map[string]EnvironmentDeployments, error) {
	// One index probe per environment (deployments_environment_latest_idx, and
	// the succeeded index for the EXISTS) rather than sorting the team's
	// whole deployment history.
	rows, err := s.db.Query(ctx, `
		SELECT d.* FROM environments e
		CROSS JOIN LATERAL (
			SELECT `+deploymentSummaryColumns+`, `+everSucceededSQL("e.id")+` AS ever_succeeded
			FROM deployments
			WHERE team_id = $1 AND environment_id = e.id
			ORDER BY created_at DESC, id DESC
			LIMIT 1) d
		WHERE e.team_id = $1 AND ($2 = '' OR e.application_id = $2)`, teamID, applicationID)
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

// CurrentDeployments is an environment's newest deployment and the newest
// one that succeeded (what runs now), either nil, both the same deployment
// when the newest succeeded.
type CurrentDeployments struct {
	Latest, Succeeded *Deployment
	// LatestActorEmail is the email of the member who asked for Latest;
	// "" when its actor is no member of the team (a token, GitHub, the
	// system or a former member).
	LatestActorEmail string
}

// deploymentPageColumns are deploymentColumns without the captured
// manifest and the variables (NULL), which the pages showing an
// environment's current deployments do not read.
const deploymentPageColumns = `id, team_id, application_id, environment_id, state, revision,
	NULL::jsonb, rendered_manifest, NULL::jsonb, spec_hash, origin, coalesce(restored_from, ''),
	coalesce(promoted_from, ''), actor, error_code, error_message, steps,
	created_at, updated_at, started_at, finished_at`

// CurrentDeploymentsOf returns, by environment id and in one query, the
// newest and the latest succeeded deployment of each of the application's
// environments (not previews) that has one. They carry their rendered
// manifest and steps but not their captured manifest nor their variables
// (nil); a deployment that is both is read once. The newest one's actor
// comes with its email when a member asked for it.
func (s *Store) CurrentDeploymentsOf(ctx context.Context, teamID, applicationID string) (map[string]CurrentDeployments, error) {
	const op = "current deployments"
	// Two index probes per environment (deployments_environment_latest_idx
	// and the succeeded index), then the rows by primary key.
	rows, err := s.db.Query(ctx, `
		WITH envs AS (
			SELECT id FROM environments WHERE team_id = $1 AND application_id = $2 AND kind = 'environment'
		), latest AS (
			SELECT l.id FROM envs e CROSS JOIN LATERAL (
				SELECT id FROM deployments WHERE team_id = $1 AND environment_id = e.id
				ORDER BY created_at DESC, id DESC LIMIT 1) l
		), succeeded AS (
			SELECT o.id FROM envs e CROSS JOIN LATERAL (
				SELECT id FROM deployments WHERE team_id = $1 AND environment_id = e.id AND state = 'succeeded'
				ORDER BY finished_at DESC, id DESC LIMIT 1) o
		)
		SELECT `+deploymentPageColumns+`, id IN (SELECT id FROM latest), id IN (SELECT id FROM succeeded),
			coalesce((SELECT u.email FROM memberships m JOIN users u ON u.id = m.user_id
				WHERE m.team_id = $1 AND 'user:' || m.user_id = d.actor), '')
		FROM deployments d
		WHERE team_id = $1 AND id IN (SELECT id FROM latest UNION ALL SELECT id FROM succeeded)`, teamID, applicationID)
	if err != nil {
		return nil, wrap(op, err)
	}
	defer rows.Close()
	out := map[string]CurrentDeployments{}
	for rows.Next() {
		var latest, succeeded bool
		var email string
		d, err := scanDeployment(withTrailing{rows, []any{&latest, &succeeded, &email}})
		if err != nil {
			return nil, wrap(op, err)
		}
		c := out[d.EnvironmentID]
		if latest {
			c.Latest, c.LatestActorEmail = &d, email
		}
		if succeeded {
			c.Succeeded = &d
		}
		out[d.EnvironmentID] = c
	}
	return out, wrap(op, rows.Err())
}

// EnvironmentLatest is an environment as the applications list shows it:
// its name and a summary of its newest deployment.
type EnvironmentLatest struct {
	ID, ApplicationID, Name string
	// Latest holds only the newest deployment's id, state, actor and
	// creation time; nil when the environment was never deployed.
	Latest        *Deployment
	EverSucceeded bool
	// Commit is the commit the newest deployment read (fetched, one-off
	// ref or local snapshot), "" when none.
	Commit string
}

// ListEnvironmentsLatest returns every environment (not preview) of the
// given applications of the team with a summary of its newest deployment
// and that deployment's commit, by application then name, in one query.
func (s *Store) ListEnvironmentsLatest(ctx context.Context, teamID string, applicationIDs []string) ([]EnvironmentLatest, error) {
	const op = "list environments with their latest deployment"
	rows, err := s.db.Query(ctx, `
		SELECT e.id, e.application_id, e.name, d.id, d.state, d.actor, d.created_at, coalesce(d.commit, ''),
			`+everSucceededSQL("e.id")+`
		FROM environments e
		LEFT JOIN LATERAL (
			SELECT l.id, l.state, l.actor, l.created_at, `+deploymentCommitSQL("l")+` AS commit FROM deployments l
			WHERE l.team_id = $1 AND l.environment_id = e.id
			ORDER BY l.created_at DESC, l.id DESC
			LIMIT 1) d ON true
		WHERE e.team_id = $1 AND e.application_id = ANY($2) AND e.kind = 'environment'
		ORDER BY e.application_id, e.name`, teamID, applicationIDs)
	if err != nil {
		return nil, wrap(op, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (EnvironmentLatest, error) {
		var e EnvironmentLatest
		var id, state, actor *string
		var created *time.Time
		if err := r.Scan(&e.ID, &e.ApplicationID, &e.Name, &id, &state, &actor, &created, &e.Commit, &e.EverSucceeded); err != nil {
			return e, err
		}
		if id != nil {
			e.Latest = &Deployment{ID: *id, TeamID: teamID, ApplicationID: e.ApplicationID, EnvironmentID: e.ID,
				State: DeploymentState(*state), Actor: *actor, CreatedAt: *created}
		}
		return e, nil
	})
	return out, wrap(op, err)
}
