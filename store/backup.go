package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Backup states and targets.
const (
	BackupPending   = "pending"
	BackupRunning   = "running"
	BackupSucceeded = "succeeded"
	BackupFailed    = "failed"
	BackupDeleted   = "deleted"

	TargetDirectory = "directory"
	TargetS3        = "s3"
)

// Backup is one copy of a volume (Kind "volume") or a Postgres database
// (Kind "postgres") of an environment. Name is the manifest backup that
// scheduled it, "" for one taken by hand of a volume or service.
type Backup struct {
	ID              string
	TeamID          string
	ApplicationID   string
	EnvironmentID   string
	EnvironmentName string
	Kind            string
	Subject         string
	Name            string
	Origin          string
	State           string
	Target          string
	Location        string
	SizeBytes       int64
	SHA256          string
	Message         string
	Actor           string
	StartedAt       *time.Time
	EndedAt         *time.Time
	CreatedAt       time.Time
}

// BackupParams creates a pending backup.
type BackupParams struct {
	ApplicationID   string
	EnvironmentID   string
	EnvironmentName string
	Kind            string
	Subject         string
	Name            string
	Origin          string
	Actor           string
}

// BackupFilter narrows ListBackups; zero fields do not filter.
type BackupFilter struct {
	ApplicationID string
	EnvironmentID string
	Name          string
	Origin        string
	State         string
	Limit         int
}

const backupColumns = `id, team_id, application_id, environment_id, environment_name, kind, subject, name,
	origin, state, target, location, size_bytes, sha256, message, actor, started_at, ended_at, created_at`

func scanBackup(row pgx.Row) (Backup, error) {
	var b Backup
	err := row.Scan(&b.ID, &b.TeamID, &b.ApplicationID, &b.EnvironmentID, &b.EnvironmentName, &b.Kind,
		&b.Subject, &b.Name, &b.Origin, &b.State, &b.Target, &b.Location, &b.SizeBytes, &b.SHA256,
		&b.Message, &b.Actor, &b.StartedAt, &b.EndedAt, &b.CreatedAt)
	return b, err
}

// CreateBackup records a pending backup.
func (s *Store) CreateBackup(ctx context.Context, teamID string, p BackupParams) (Backup, error) {
	b, err := scanBackup(s.db.QueryRow(ctx, `
		INSERT INTO backups (id, team_id, application_id, environment_id, environment_name, kind, subject, name, origin, actor, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, clock_timestamp()) RETURNING `+backupColumns,
		newID("bak"), teamID, p.ApplicationID, p.EnvironmentID, p.EnvironmentName, p.Kind, p.Subject, p.Name, p.Origin, p.Actor))
	return b, wrap("create backup", err)
}

// GetBackup returns one of the team's backups.
func (s *Store) GetBackup(ctx context.Context, teamID, id string) (Backup, error) {
	b, err := scanBackup(s.db.QueryRow(ctx, `SELECT `+backupColumns+` FROM backups WHERE team_id = $1 AND id = $2`, teamID, id))
	return b, wrap("get backup", err)
}

// ListBackups returns the team's backups, newest first (deleted ones only
// when the filter asks for them).
func (s *Store) ListBackups(ctx context.Context, teamID string, f BackupFilter) ([]Backup, error) {
	if f.Limit <= 0 || f.Limit > 1000 {
		f.Limit = 100
	}
	rows, err := s.db.Query(ctx, `SELECT `+backupColumns+` FROM backups
		WHERE team_id = $1 AND ($2 = '' OR application_id = $2) AND ($3 = '' OR environment_id = $3)
		  AND ($4 = '' OR name = $4) AND ($5 = '' OR origin = $5)
		  AND (state = $6 OR ($6 = '' AND state <> 'deleted'))
		ORDER BY created_at DESC, id DESC LIMIT $7`,
		teamID, f.ApplicationID, f.EnvironmentID, f.Name, f.Origin, f.State, f.Limit)
	if err != nil {
		return nil, wrap("list backups", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Backup, error) { return scanBackup(r) })
	return out, wrap("list backups", err)
}

// StartBackup records where a pending backup is being written.
func (s *Store) StartBackup(ctx context.Context, teamID, id, target, location string, at time.Time) error {
	return s.execOne(ctx, "start backup", `UPDATE backups SET state = 'running', target = $3, location = $4,
		started_at = coalesce(started_at, $5)
		WHERE team_id = $1 AND id = $2 AND state IN ('pending', 'running')`, teamID, id, target, location, at)
}

// FinishBackup records a backup's outcome: size and checksum when it
// succeeded, the reason when it failed.
func (s *Store) FinishBackup(ctx context.Context, teamID, id, state string, size int64, sum, message string, at time.Time) error {
	return s.execOne(ctx, "finish backup", `UPDATE backups SET state = $3, size_bytes = $4, sha256 = $5,
		message = $6, ended_at = $7
		WHERE team_id = $1 AND id = $2 AND state IN ('pending', 'running')`, teamID, id, state, size, sum, message, at)
}

// MarkBackupDeleted records that a backup's copy was removed from its
// target (retention or by hand).
func (s *Store) MarkBackupDeleted(ctx context.Context, teamID, id, message string) error {
	return s.execOne(ctx, "delete backup", `UPDATE backups SET state = 'deleted', message = $3
		WHERE team_id = $1 AND id = $2 AND state <> 'deleted'`, teamID, id, message)
}
