package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvironmentKind tells environments from previews.
type EnvironmentKind string

// Environment kinds.
const (
	KindEnvironment EnvironmentKind = "environment"
	KindPreview     EnvironmentKind = "preview"
)

// Environment is a named deploy target of an application, or a preview.
type Environment struct {
	ID            string
	TeamID        string
	ApplicationID string
	Kind          EnvironmentKind
	Name          string
	Branch        string
	Commit        string
	Slot          string
	Slug          string
	Variables     json.RawMessage // a JSON object of variable values
	Visibility    string          // "", "public" or "private"; "" is the kind's default
	Rollback      string          // "", "automatic" or "manual"; "" is the default policy
	PromoteFrom   string          // environment id, "" when not promoted
	Sync          bool
	// Untrusted previews (from forks) never mount stored secrets.
	Untrusted bool
	// DeletingAt is set on a preview whose deletion is under way.
	DeletingAt *time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// EnvironmentParams are the fields of a new environment.
type EnvironmentParams struct {
	ApplicationID string
	Kind          EnvironmentKind
	Name          string
	Branch        string
	Commit        string
	Slot          string
	Slug          string
	Variables     json.RawMessage // nil stores {}
	Visibility    string
	Rollback      string
	PromoteFrom   string
	Sync          bool
	Untrusted     bool
}

// EnvironmentUpdate changes an environment's configuration; nil fields are
// left as they are. Kind, application and slug never change.
type EnvironmentUpdate struct {
	Name        *string
	Branch      *string
	Commit      *string
	Variables   json.RawMessage
	Visibility  *string
	Rollback    *string
	PromoteFrom *string // "" clears it
	Sync        *bool
}

const environmentColumns = `id, team_id, application_id, kind, name, branch, commit, slot, slug, variables,
	visibility, rollback, coalesce(promote_from, ''), sync, untrusted, deleting_at, created_at, updated_at`

func scanEnvironment(row pgx.Row) (Environment, error) {
	var e Environment
	err := row.Scan(&e.ID, &e.TeamID, &e.ApplicationID, &e.Kind, &e.Name, &e.Branch, &e.Commit, &e.Slot, &e.Slug,
		&e.Variables, &e.Visibility, &e.Rollback, &e.PromoteFrom, &e.Sync, &e.Untrusted, &e.DeletingAt, &e.CreatedAt, &e.UpdatedAt)
	return e, err
}

// CreateEnvironment creates an environment or preview of one of the team's
// applications. The application must exist in the team (ErrNotFound
// otherwise); a taken name or slug, or a second preview of one branch and
// slot, fails with a *ConflictError.
func (s *Store) CreateEnvironment(ctx context.Context, teamID string, p EnvironmentParams) (Environment, error) {
	vars := p.Variables
	if vars == nil {
		vars = json.RawMessage(`{}`)
	}
	// INSERT ... SELECT from the live application: a missing, deleted or
	// foreign application inserts nothing, which is ErrNotFound.
	e, err := scanEnvironment(s.db.QueryRow(ctx, `
		INSERT INTO environments (id, team_id, application_id, kind, name, branch, commit, slot, slug,
			variables, visibility, rollback, promote_from, sync, untrusted)
		SELECT $3, a.team_id, a.id, $4, $5, $6, $7, $8, $9, $10, $11, $12, nullif($13, ''), $14, $15
		FROM applications a
		WHERE a.team_id = $1 AND a.id = $2 AND a.deleted_at IS NULL
		RETURNING `+environmentColumns,
		teamID, p.ApplicationID, newID("env"), p.Kind, p.Name, p.Branch, p.Commit, p.Slot, p.Slug,
		vars, p.Visibility, p.Rollback, p.PromoteFrom, p.Sync, p.Untrusted))
	return e, wrap("create environment", err)
}

// GetEnvironment returns one of the team's environments or previews.
func (s *Store) GetEnvironment(ctx context.Context, teamID, id string) (Environment, error) {
	e, err := scanEnvironment(s.db.QueryRow(ctx, `
		SELECT `+environmentColumns+` FROM environments WHERE team_id = $1 AND id = $2`, teamID, id))
	return e, wrap("get environment", err)
}

// GetEnvironmentByName returns the application's environment or preview
// with that name.
func (s *Store) GetEnvironmentByName(ctx context.Context, teamID, applicationID, name string) (Environment, error) {
	e, err := scanEnvironment(s.db.QueryRow(ctx, `
		SELECT `+environmentColumns+` FROM environments
		WHERE team_id = $1 AND application_id = $2 AND name = $3`, teamID, applicationID, name))
	return e, wrap("get environment by name", err)
}

// GetPreview returns the application's preview of a branch and slot.
func (s *Store) GetPreview(ctx context.Context, teamID, applicationID, branch, slot string) (Environment, error) {
	e, err := scanEnvironment(s.db.QueryRow(ctx, `
		SELECT `+environmentColumns+` FROM environments
		WHERE team_id = $1 AND application_id = $2 AND kind = 'preview' AND branch = $3 AND slot = $4`,
		teamID, applicationID, branch, slot))
	return e, wrap("get preview", err)
}

// ListEnvironments returns the application's environments and previews:
// environments first, each kind ordered by name.
func (s *Store) ListEnvironments(ctx context.Context, teamID, applicationID string) ([]Environment, error) {
	rows, err := s.db.Query(ctx, `
		SELECT `+environmentColumns+` FROM environments
		WHERE team_id = $1 AND application_id = $2
		ORDER BY kind, name`, teamID, applicationID)
	if err != nil {
		return nil, wrap("list environments", err)
	}
	es, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Environment, error) { return scanEnvironment(r) })
	return es, wrap("list environments", err)
}

// UpdateEnvironment applies the non-nil fields of u.
func (s *Store) UpdateEnvironment(ctx context.Context, teamID, id string, u EnvironmentUpdate) (Environment, error) {
	var vars []byte
	if u.Variables != nil {
		vars = u.Variables
	}
	e, err := scanEnvironment(s.db.QueryRow(ctx, `
		UPDATE environments SET
			name = coalesce($3, name),
			branch = coalesce($4, branch),
			commit = coalesce($5, commit),
			variables = coalesce($6::jsonb, variables),
			visibility = coalesce($7, visibility),
			rollback = coalesce($8, rollback),
			promote_from = CASE WHEN $9::text IS NULL THEN promote_from ELSE nullif($9, '') END,
			sync = coalesce($10, sync),
			updated_at = now()
		WHERE team_id = $1 AND id = $2
		RETURNING `+environmentColumns,
		teamID, id, u.Name, u.Branch, u.Commit, vars, u.Visibility, u.Rollback, u.PromoteFrom, u.Sync))
	return e, wrap("update environment", err)
}

// DeleteEnvironment deletes the environment with its deployments and
// hostname reservations.
func (s *Store) DeleteEnvironment(ctx context.Context, teamID, id string) error {
	return s.execOne(ctx, "delete environment", `
		DELETE FROM environments WHERE team_id = $1 AND id = $2`, teamID, id)
}
