package store

import (
	"context"
	"time"
)

// BackupTarget is an environment's S3-compatible backup target. The secret
// access key is sealed (keyring): SecretNonce and SecretSealed under KeyID.
type BackupTarget struct {
	EnvironmentID string
	TeamID        string
	Endpoint      string
	Bucket        string
	Prefix        string
	Region        string
	Insecure      bool
	AccessKeyID   string
	SecretNonce   []byte
	SecretSealed  []byte
	KeyID         string
	UpdatedAt     time.Time
}

// SetBackupTarget stores the environment's target, replacing any.
func (s *Store) SetBackupTarget(ctx context.Context, teamID string, t BackupTarget) error {
	_, err := s.db.Exec(ctx, `
		INSERT INTO backup_targets (environment_id, team_id, endpoint, bucket, prefix, region, insecure,
			access_key_id, secret_nonce, secret_sealed, key_id)
		SELECT e.id, e.team_id, $3, $4, $5, $6, $7, $8, $9, $10, $11 FROM environments e
		WHERE e.team_id = $1 AND e.id = $2
		ON CONFLICT (environment_id) DO UPDATE SET endpoint = EXCLUDED.endpoint, bucket = EXCLUDED.bucket,
			prefix = EXCLUDED.prefix, region = EXCLUDED.region, insecure = EXCLUDED.insecure,
			access_key_id = EXCLUDED.access_key_id, secret_nonce = EXCLUDED.secret_nonce,
			secret_sealed = EXCLUDED.secret_sealed, key_id = EXCLUDED.key_id, updated_at = now()`,
		teamID, t.EnvironmentID, t.Endpoint, t.Bucket, t.Prefix, t.Region, t.Insecure, t.AccessKeyID,
		t.SecretNonce, t.SecretSealed, t.KeyID)
	return wrap("set backup target", err)
}

// GetBackupTarget returns the environment's S3 target, or ErrNotFound when
// its backups go to the manager's directory.
func (s *Store) GetBackupTarget(ctx context.Context, teamID, envID string) (BackupTarget, error) {
	var t BackupTarget
	err := s.db.QueryRow(ctx, `SELECT environment_id, team_id, endpoint, bucket, prefix, region, insecure,
			access_key_id, secret_nonce, secret_sealed, key_id, updated_at
		FROM backup_targets WHERE team_id = $1 AND environment_id = $2`, teamID, envID).Scan(
		&t.EnvironmentID, &t.TeamID, &t.Endpoint, &t.Bucket, &t.Prefix, &t.Region, &t.Insecure,
		&t.AccessKeyID, &t.SecretNonce, &t.SecretSealed, &t.KeyID, &t.UpdatedAt)
	return t, wrap("get backup target", err)
}

// DeleteBackupTarget returns the environment to the directory target.
func (s *Store) DeleteBackupTarget(ctx context.Context, teamID, envID string) error {
	return s.execOne(ctx, "delete backup target", `DELETE FROM backup_targets WHERE team_id = $1 AND environment_id = $2`, teamID, envID)
}
