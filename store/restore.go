package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Restore states. pending, stopping, restoring and starting are active:
// deployments of the environment are refused meanwhile.
const (
	RestorePending   = "pending"
	RestoreStopping  = "stopping"
	RestoreRestoring = "restoring"
	RestoreStarting  = "starting"
	RestoreSucceeded = "succeeded"
	RestoreFailed    = "failed"
)

// Restore copies a backup into an environment (its own or another of the
// same application). Stopped lists the services it stopped, started
// again once the data is back.
type Restore struct {
	ID            string
	TeamID        string
	ApplicationID string
	EnvironmentID string
	BackupID      string
	State         string
	Stopped       []string
	Message       string
	Actor         string
	EndedAt       *time.Time
	ReleasedAt    *time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Active reports whether the restore is still under way.
func (r Restore) Active() bool {
	switch r.State {
	case RestorePending, RestoreStopping, RestoreRestoring, RestoreStarting:
		return true
	}
	return false
}

// Holds reports whether the environment stays stopped because of it: while
// it runs, and after it failed until a deployment succeeds.
func (r Restore) Holds() bool {
	return r.Active() || r.State == RestoreFailed && r.ReleasedAt == nil
}

const restoreColumns = `id, team_id, application_id, environment_id, backup_id, state, stopped, message,
	actor, ended_at, released_at, created_at, updated_at`

func scanRestore(row pgx.Row) (Restore, error) {
	var r Restore
	err := row.Scan(&r.ID, &r.TeamID, &r.ApplicationID, &r.EnvironmentID, &r.BackupID, &r.State, &r.Stopped,
		&r.Message, &r.Actor, &r.EndedAt, &r.ReleasedAt, &r.CreatedAt, &r.UpdatedAt)
	return r, err
}

// activeDeploymentStates are the states of a deployment that still runs.
var activeDeploymentStates = []string{string(StateRequested), string(StateCapturing), string(StatePreparing),
	string(StateRunningJobs), string(StateRollingOut)}

// CreateRestore requests a restore of backupID into envID. It is refused
// with a *ConflictError (Code deployment_in_progress) while a deployment
// of the environment runs, and (restore_in_progress) while another
// restore does; the environment row is locked like CreateDeployment does,
// so the two cannot start together.
func (s *Store) CreateRestore(ctx context.Context, teamID, envID, backupID, actor string) (Restore, error) {
	const op = "create restore"
	var r Restore
	err := s.WithTx(ctx, func(tx *Store) error {
		var appID string
		if err := tx.db.QueryRow(ctx, `SELECT application_id FROM environments WHERE team_id = $1 AND id = $2 FOR UPDATE`,
			teamID, envID).Scan(&appID); err != nil {
			return wrap(op, err)
		}
		var busy bool
		if err := tx.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM deployments
			WHERE team_id = $1 AND environment_id = $2 AND state = ANY($3))`,
			teamID, envID, activeDeploymentStates).Scan(&busy); err != nil {
			return wrap(op, err)
		}
		if busy {
			return fmt.Errorf("%s: %w", op, &ConflictError{Constraint: "deployments_one_active_key", Field: "environment_id", Code: "deployment_in_progress"})
		}
		var err error
		r, err = scanRestore(tx.db.QueryRow(ctx, `
			INSERT INTO restores (id, team_id, application_id, environment_id, backup_id, actor, created_at)
			SELECT $1, $2, $3, $4, b.id, $6, clock_timestamp() FROM backups b
			WHERE b.team_id = $2 AND b.id = $5 AND b.application_id = $3
			RETURNING `+restoreColumns, newID("rst"), teamID, appID, envID, backupID, actor))
		return wrap(op, err)
	})
	return r, err
}

// GetRestore returns one of the team's restores.
func (s *Store) GetRestore(ctx context.Context, teamID, id string) (Restore, error) {
	r, err := scanRestore(s.db.QueryRow(ctx, `SELECT `+restoreColumns+` FROM restores WHERE team_id = $1 AND id = $2`, teamID, id))
	return r, wrap("get restore", err)
}

// ListRestores returns the environment's restores, newest first.
func (s *Store) ListRestores(ctx context.Context, teamID, envID string, limit int) ([]Restore, error) {
	if limit <= 0 || limit > 500 {
		limit = 20
	}
	rows, err := s.db.Query(ctx, `SELECT `+restoreColumns+` FROM restores
		WHERE team_id = $1 AND environment_id = $2 ORDER BY created_at DESC, id DESC LIMIT $3`, teamID, envID, limit)
	if err != nil {
		return nil, wrap("list restores", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Restore, error) { return scanRestore(r) })
	return out, wrap("list restores", err)
}

// EnvironmentHold returns the restore holding the environment stopped
// (Restore.Holds), or ErrNotFound.
func (s *Store) EnvironmentHold(ctx context.Context, teamID, envID string) (Restore, error) {
	r, err := scanRestore(s.db.QueryRow(ctx, `SELECT `+restoreColumns+` FROM restores
		WHERE team_id = $1 AND environment_id = $2
		  AND (state IN ('pending', 'stopping', 'restoring', 'starting') OR (state = 'failed' AND released_at IS NULL))
		ORDER BY created_at DESC LIMIT 1`, teamID, envID))
	return r, wrap("environment hold", err)
}

// UpdateRestore moves an active restore to state, recording the services
// it stopped and a message; a terminal state sets ended_at.
func (s *Store) UpdateRestore(ctx context.Context, teamID, id, state string, stopped []string, message string) error {
	if stopped == nil {
		stopped = []string{}
	}
	return s.execOne(ctx, "update restore", `UPDATE restores SET state = $3, stopped = $4, message = $5,
		ended_at = CASE WHEN $3 IN ('succeeded', 'failed') THEN clock_timestamp() END, updated_at = clock_timestamp()
		WHERE team_id = $1 AND id = $2 AND state IN ('pending', 'stopping', 'restoring', 'starting')`,
		teamID, id, state, stopped, message)
}

// ReleaseRestoreHolds ends the hold of failed restores of the environment:
// a deployment of it succeeded, so it runs again.
func (s *Store) ReleaseRestoreHolds(ctx context.Context, teamID, envID string) error {
	_, err := s.db.Exec(ctx, `UPDATE restores SET released_at = clock_timestamp()
		WHERE team_id = $1 AND environment_id = $2 AND state = 'failed' AND released_at IS NULL`, teamID, envID)
	return wrap("release restore holds", err)
}
