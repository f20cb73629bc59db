package backupctl

import (
	"context"
	"errors"
	"fmt"

	"github.com/slipwayhq/slipway/backupstore"
	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/store"
)

// Targets resolves environments' backup targets: an S3 bucket when one is
// set (its secret key sealed with the keyring like a secret value), the
// directory on the manager otherwise.
type Targets struct {
	Store     *store.Store
	Keyring   *keyring.Keyring
	Directory string
}

func targetAD(teamID, envID, accessKeyID string) []byte {
	return keyring.AD("backup-target", teamID, envID, accessKeyID)
}

// For returns the environment's target.
func (t *Targets) For(ctx context.Context, teamID, envID string) (backupstore.Target, error) {
	row, err := t.Store.GetBackupTarget(ctx, teamID, envID)
	if errors.Is(err, store.ErrNotFound) {
		if t.Directory == "" {
			return nil, errors.New("no backup directory is configured ([backups] directory)")
		}
		return backupstore.Directory{Root: t.Directory}, nil
	}
	if err != nil {
		return nil, err
	}
	if t.Keyring == nil {
		return nil, errors.New("no secret key is configured to open the S3 credentials")
	}
	secret, err := t.Keyring.Open(keyring.Sealed{KeyID: row.KeyID, Nonce: row.SecretNonce, Ciphertext: row.SecretSealed},
		targetAD(teamID, envID, row.AccessKeyID))
	if err != nil {
		return nil, fmt.Errorf("open S3 credentials: %w", err)
	}
	return backupstore.NewS3(backupstore.S3Config{Endpoint: row.Endpoint, Bucket: row.Bucket, Prefix: row.Prefix, Region: row.Region,
		Insecure: row.Insecure, AccessKeyID: row.AccessKeyID, SecretAccessKey: string(secret)})
}

// SetS3 checks that cfg reaches its bucket, then stores it as the
// environment's target with the secret key sealed.
func (t *Targets) SetS3(ctx context.Context, teamID, envID string, cfg backupstore.S3Config) error {
	if t.Keyring == nil {
		return errors.New("no secret key is configured to seal the S3 credentials")
	}
	s3, err := backupstore.NewS3(cfg)
	if err != nil {
		return err
	}
	if err := s3.Check(ctx); err != nil {
		return err
	}
	sealed, err := t.Keyring.Seal([]byte(cfg.SecretAccessKey), targetAD(teamID, envID, cfg.AccessKeyID))
	if err != nil {
		return err
	}
	return t.Store.SetBackupTarget(ctx, teamID, store.BackupTarget{EnvironmentID: envID, Endpoint: cfg.Endpoint, Bucket: cfg.Bucket,
		Prefix: cfg.Prefix, Region: cfg.Region, Insecure: cfg.Insecure, AccessKeyID: cfg.AccessKeyID,
		SecretNonce: sealed.Nonce, SecretSealed: sealed.Ciphertext, KeyID: sealed.KeyID})
}
