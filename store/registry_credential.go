package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// RegistryCredential is a team's account on an image registry: never its
// password, which only RegistryCredentialCiphertext returns, sealed.
type RegistryCredential struct {
	ID     string
	TeamID string
	// Host is the registry's host[:port], normalized ("docker.io" for
	// Docker Hub).
	Host      string
	Username  string
	KeyID     string
	CreatedBy string
	CreatedAt time.Time
	UpdatedAt time.Time
}

const registryCredentialColumns = `id, team_id, host, username, key_id, created_by, created_at, updated_at`

func scanRegistryCredential(row pgx.Row) (RegistryCredential, error) {
	var c RegistryCredential
	err := row.Scan(&c.ID, &c.TeamID, &c.Host, &c.Username, &c.KeyID, &c.CreatedBy, &c.CreatedAt, &c.UpdatedAt)
	return c, err
}

// registryRef is the row a registry password is sealed into.
func registryRef(teamID, id, host string) SealedRef {
	return SealedRef{Kind: SealedRegistry, TeamID: teamID, SecretID: id, Name: host, Version: 1}
}

// SetRegistryCredential stores the team's account on host, replacing the
// one it had there. seal is called once, inside the transaction, with the
// row the password goes into; it returns the sealed password. The team
// must exist (ErrNotFound otherwise).
func (s *Store) SetRegistryCredential(ctx context.Context, teamID, host, username, actor string,
	seal func(SealedRef) (Sealed, error)) (RegistryCredential, error) {
	const op = "set registry credential"
	var out RegistryCredential
	err := s.WithTx(ctx, func(tx *Store) error {
		// Find (and lock) the row the password goes into, or pick the id of
		// a new one: the id is part of what the sealing binds.
		id := newID("rcr")
		err := tx.db.QueryRow(ctx, `
			SELECT id FROM registry_credentials WHERE team_id = $1 AND host = $2 FOR UPDATE`,
			teamID, host).Scan(&id)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return wrap(op, err)
		}
		sealed, err := seal(registryRef(teamID, id, host))
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		out, err = scanRegistryCredential(tx.db.QueryRow(ctx, `
			INSERT INTO registry_credentials (id, team_id, host, username, key_id, nonce, ciphertext, created_by)
			SELECT $3, t.id, $2, $4, $5, $6, $7, $8 FROM teams t WHERE t.id = $1
			ON CONFLICT (team_id, host) DO UPDATE SET username = excluded.username, key_id = excluded.key_id,
				nonce = excluded.nonce, ciphertext = excluded.ciphertext, created_by = excluded.created_by, updated_at = now()
			RETURNING `+registryCredentialColumns,
			teamID, host, id, username, sealed.KeyID, sealed.Nonce, sealed.Ciphertext, actor))
		return wrap(op, err)
	})
	return out, err
}

// ListRegistryCredentials returns the team's registry accounts by host.
func (s *Store) ListRegistryCredentials(ctx context.Context, teamID string) ([]RegistryCredential, error) {
	rows, err := s.db.Query(ctx, `
		SELECT `+registryCredentialColumns+` FROM registry_credentials
		WHERE team_id = $1 ORDER BY host`, teamID)
	if err != nil {
		return nil, wrap("list registry credentials", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (RegistryCredential, error) { return scanRegistryCredential(r) })
	return out, wrap("list registry credentials", err)
}

// DeleteRegistryCredential removes the team's account on host.
func (s *Store) DeleteRegistryCredential(ctx context.Context, teamID, host string) error {
	return s.execOne(ctx, "delete registry credential", `
		DELETE FROM registry_credentials WHERE team_id = $1 AND host = $2`, teamID, host)
}

// RegistryCredentialCiphertext returns the team's account on host with its
// sealed password and the row it is sealed into: for the worker, which
// opens it to pull that team's images. ErrNotFound when the team has none.
func (s *Store) RegistryCredentialCiphertext(ctx context.Context, teamID, host string) (RegistryCredential, SealedRef, Sealed, error) {
	var sealed Sealed
	var c RegistryCredential
	err := s.db.QueryRow(ctx, `
		SELECT `+registryCredentialColumns+`, nonce, ciphertext FROM registry_credentials
		WHERE team_id = $1 AND host = $2`, teamID, host).Scan(
		&c.ID, &c.TeamID, &c.Host, &c.Username, &c.KeyID, &c.CreatedBy, &c.CreatedAt, &c.UpdatedAt, &sealed.Nonce, &sealed.Ciphertext)
	sealed.KeyID = c.KeyID
	return c, registryRef(teamID, c.ID, host), sealed, wrap("registry credential ciphertext", err)
}

// RegistryHostHasCredentials reports whether any team holds credentials
// for host: images from there may be private, so whoever deploys one must
// show the registry their own access (runtime/image.Access.Verify). It is
// installation-wide on purpose and returns nothing of any team.
func (s *Store) RegistryHostHasCredentials(ctx context.Context, host string) (bool, error) {
	var ok bool
	err := s.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM registry_credentials WHERE host = $1)`, host).Scan(&ok)
	return ok, wrap("registry host has credentials", err)
}
