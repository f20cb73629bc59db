package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Application is a named manifest owner inside a team.
type Application struct {
	ID              string
	TeamID          string
	Name            string
	CurrentRevision int64 // 0 until a manifest is saved
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

const applicationColumns = `id, team_id, name, current_revision, created_at, updated_at`

func scanApplication(row pgx.Row) (Application, error) {
	var a Application
	err := row.Scan(&a.ID, &a.TeamID, &a.Name, &a.CurrentRevision, &a.CreatedAt, &a.UpdatedAt)
	return a, err
}

// CreateApplication creates an application; a name the team already uses
// fails with a *ConflictError (application_name_taken).
func (s *Store) CreateApplication(ctx context.Context, teamID, name string) (Application, error) {
	a, err := scanApplication(s.db.QueryRow(ctx, `
		INSERT INTO applications (id, team_id, name) VALUES ($1, $2, $3)
		RETURNING `+applicationColumns, newID("app"), teamID, name))
	return a, wrap("create application", err)
}

// GetApplication returns one of the team's applications; a deleted one is
// ErrNotFound.
func (s *Store) GetApplication(ctx context.Context, teamID, id string) (Application, error) {
	a, err := scanApplication(s.db.QueryRow(ctx, `
		SELECT `+applicationColumns+` FROM applications
		WHERE team_id = $1 AND id = $2 AND deleted_at IS NULL`, teamID, id))
	return a, wrap("get application", err)
}

// GetApplicationByName returns the team's application with that name.
func (s *Store) GetApplicationByName(ctx context.Context, teamID, name string) (Application, error) {
	a, err := scanApplication(s.db.QueryRow(ctx, `
		SELECT `+applicationColumns+` FROM applications
		WHERE team_id = $1 AND name = $2 AND deleted_at IS NULL`, teamID, name))
	return a, wrap("get application by name", err)
}

// ListApplications returns the team's applications ordered by name.
func (s *Store) ListApplications(ctx context.Context, teamID string) ([]Application, error) {
	rows, err := s.db.Query(ctx, `
		SELECT `+applicationColumns+` FROM applications
		WHERE team_id = $1 AND deleted_at IS NULL
		ORDER BY name`, teamID)
	if err != nil {
		return nil, wrap("list applications", err)
	}
	as, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Application, error) { return scanApplication(r) })
	return as, wrap("list applications", err)
}

// DeleteApplication marks the application deleted: it disappears from
// every application read at once and its name is free, while the rows stay
// for the worker that tears down what runs (PurgeApplication removes them).
// Its environments and deployments stay readable by id for that worker;
// handlers load the application first, so they 404.
func (s *Store) DeleteApplication(ctx context.Context, teamID, id string) error {
	return s.execOne(ctx, "delete application", `
		UPDATE applications SET deleted_at = now(), updated_at = now()
		WHERE team_id = $1 AND id = $2 AND deleted_at IS NULL`, teamID, id)
}

// PurgeApplication removes a deleted application's rows for good, with its
// revisions, environments, deployments and hostnames.
func (s *Store) PurgeApplication(ctx context.Context, teamID, id string) error {
	return s.execOne(ctx, "purge application", `
		DELETE FROM applications WHERE team_id = $1 AND id = $2 AND deleted_at IS NOT NULL`, teamID, id)
}
