package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Sealed is a secret value as stored: the id of the key it was sealed
// under, the nonce and the ciphertext. The store never sees a plaintext.
// Only the worker's secret source reads it back (SecretCiphertext,
// GeneratedSecretCiphertext); every other method returns metadata.
type Sealed struct {
	KeyID      string
	Nonce      []byte
	Ciphertext []byte
}

// Secret is a stored secret's metadata: never its value.
type Secret struct {
	ID             string
	TeamID         string
	ApplicationID  string
	Name           string
	CurrentVersion int
	// AllEnvironments grants every environment of the application,
	// including later ones; otherwise only EnvironmentIDs. Previews need
	// Previews either way.
	AllEnvironments bool
	EnvironmentIDs  []string // sorted
	Previews        bool
	CreatedBy       string
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// SecretVersion is one version's metadata.
type SecretVersion struct {
	Version   int
	KeyID     string
	CreatedBy string
	CreatedAt time.Time
}

// SecretAccess is who may mount a stored secret.
type SecretAccess struct {
	AllEnvironments bool
	EnvironmentIDs  []string // ignored when AllEnvironments
	Previews        bool
}

// SealedKind tells stored values from generated ones and from teams'
// registry passwords.
type SealedKind string

// Kinds of sealed values.
const (
	SealedStored    SealedKind = "stored"
	SealedGenerated SealedKind = "generated"
	// SealedRegistry is a team's registry password (or token): SecretID is
	// the credential's id, Name its host, no application.
	SealedRegistry SealedKind = "registry"
)

// SealedRef names the row a value is sealed into, so the sealer can bind
// the ciphertext to it (additional data): a stored secret's version
// (SecretID), an environment's generated value (EnvironmentID) or a team's
// registry password (SecretID is the credential's id).
type SealedRef struct {
	Kind          SealedKind
	TeamID        string
	ApplicationID string
	SecretID      string // stored values, registry credentials
	EnvironmentID string // generated values
	Name          string
	Version       int
}

// secretColumns reads the access list with the row, so no caller can
// forget it.
const secretColumns = `s.id, s.team_id, s.application_id, s.name, s.current_version, s.all_environments,
	coalesce((SELECT array_agg(e.environment_id ORDER BY e.environment_id) FROM secret_environments e
		WHERE e.team_id = s.team_id AND e.secret_id = s.id), '{}'),
	s.previews, s.created_by, s.created_at, s.updated_at`

func scanSecret(row pgx.Row) (Secret, error) {
	var s Secret
	err := row.Scan(&s.ID, &s.TeamID, &s.ApplicationID, &s.Name, &s.CurrentVersion, &s.AllEnvironments,
		&s.EnvironmentIDs, &s.Previews, &s.CreatedBy, &s.CreatedAt, &s.UpdatedAt)
	return s, err
}

// SetSecretValue adds a version to the application's live secret name,
// creating the secret (access: every environment, no previews) when there
// is none. seal is called once, inside the transaction, with the row the
// value goes into; it returns the sealed value. The application must exist
// in the team (ErrNotFound otherwise).
func (s *Store) SetSecretValue(ctx context.Context, teamID, applicationID, name, actor string,
	seal func(SealedRef) (Sealed, error)) (Secret, error) {
	const op = "set secret value"
	var out Secret
	err := s.WithTx(ctx, func(tx *Store) error {
		// Create the head row unless a live one exists; then lock it, so
		// concurrent sets number their versions one after the other.
		_, err := tx.db.Exec(ctx, `
			INSERT INTO secrets (id, team_id, application_id, name, created_by)
			SELECT $3, a.team_id, a.id, $4, $5 FROM applications a
			WHERE a.team_id = $1 AND a.id = $2 AND a.deleted_at IS NULL
			ON CONFLICT (application_id, name) WHERE deleted_at IS NULL DO NOTHING`,
			teamID, applicationID, newID("sec"), name, actor)
		if err != nil {
			return wrap(op, err)
		}
		ref := SealedRef{Kind: SealedStored}
		err = tx.db.QueryRow(ctx, `
			SELECT s.id, s.current_version + 1 FROM secrets s
			JOIN applications a ON a.team_id = s.team_id AND a.id = s.application_id AND a.deleted_at IS NULL
			WHERE s.team_id = $1 AND s.application_id = $2 AND s.name = $3 AND s.deleted_at IS NULL
			FOR UPDATE OF s`, teamID, applicationID, name).Scan(&ref.SecretID, &ref.Version)
		if err != nil {
			return wrap(op, err)
		}
		ref.TeamID, ref.ApplicationID, ref.Name = teamID, applicationID, name
		sealed, err := seal(ref)
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		if _, err := tx.db.Exec(ctx, `
			INSERT INTO secret_versions (team_id, secret_id, version, key_id, nonce, ciphertext, created_by)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			teamID, ref.SecretID, ref.Version, sealed.KeyID, sealed.Nonce, sealed.Ciphertext, actor); err != nil {
			return wrap(op, err)
		}
		out, err = scanSecret(tx.db.QueryRow(ctx, `
			UPDATE secrets s SET current_version = $3, updated_at = now()
			WHERE s.team_id = $1 AND s.id = $2
			RETURNING `+secretColumns, teamID, ref.SecretID, ref.Version))
		return wrap(op, err)
	})
	return out, err
}

// GetSecret returns one of the team's live secrets.
func (s *Store) GetSecret(ctx context.Context, teamID, id string) (Secret, error) {
	sec, err := scanSecret(s.db.QueryRow(ctx, `
		SELECT `+secretColumns+` FROM secrets s
		WHERE s.team_id = $1 AND s.id = $2 AND s.deleted_at IS NULL`, teamID, id))
	return sec, wrap("get secret", err)
}

// GetSecretByName returns the application's live secret of that name.
func (s *Store) GetSecretByName(ctx context.Context, teamID, applicationID, name string) (Secret, error) {
	sec, err := scanSecret(s.db.QueryRow(ctx, `
		SELECT `+secretColumns+` FROM secrets s
		WHERE s.team_id = $1 AND s.application_id = $2 AND s.name = $3 AND s.deleted_at IS NULL`,
		teamID, applicationID, name))
	return sec, wrap("get secret by name", err)
}

// ListSecrets returns the application's live secrets by name.
func (s *Store) ListSecrets(ctx context.Context, teamID, applicationID string) ([]Secret, error) {
	rows, err := s.db.Query(ctx, `
		SELECT `+secretColumns+` FROM secrets s
		WHERE s.team_id = $1 AND s.application_id = $2 AND s.deleted_at IS NULL
		ORDER BY s.name`, teamID, applicationID)
	if err != nil {
		return nil, wrap("list secrets", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Secret, error) { return scanSecret(r) })
	return out, wrap("list secrets", err)
}

// ListSecretVersions returns a live secret's versions, newest first.
func (s *Store) ListSecretVersions(ctx context.Context, teamID, secretID string) ([]SecretVersion, error) {
	if _, err := s.GetSecret(ctx, teamID, secretID); err != nil {
		return nil, fmt.Errorf("list secret versions: %w", err)
	}
	rows, err := s.db.Query(ctx, `
		SELECT version, key_id, created_by, created_at FROM secret_versions
		WHERE team_id = $1 AND secret_id = $2
		ORDER BY version DESC`, teamID, secretID)
	if err != nil {
		return nil, wrap("list secret versions", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (SecretVersion, error) {
		var v SecretVersion
		err := r.Scan(&v.Version, &v.KeyID, &v.CreatedBy, &v.CreatedAt)
		return v, err
	})
	return out, wrap("list secret versions", err)
}

// SetSecretAccess replaces a live secret's access. Listed environments
// must be environments (not previews) of the secret's application:
// another's, or a missing one, is ErrNotFound and changes nothing.
// Narrowing access does not touch deployments that pinned a version.
func (s *Store) SetSecretAccess(ctx context.Context, teamID, id string, a SecretAccess) (Secret, error) {
	const op = "set secret access"
	var out Secret
	err := s.WithTx(ctx, func(tx *Store) error {
		var appID string
		err := tx.db.QueryRow(ctx, `
			UPDATE secrets SET all_environments = $3, previews = $4, updated_at = now()
			WHERE team_id = $1 AND id = $2 AND deleted_at IS NULL
			RETURNING application_id`, teamID, id, a.AllEnvironments, a.Previews).Scan(&appID)
		if err != nil {
			return wrap(op, err)
		}
		if _, err := tx.db.Exec(ctx, `DELETE FROM secret_environments WHERE team_id = $1 AND secret_id = $2`,
			teamID, id); err != nil {
			return wrap(op, err)
		}
		if !a.AllEnvironments && len(a.EnvironmentIDs) > 0 {
			// Only environments of the same application and kind qualify;
			// anything else makes the counts differ.
			tag, err := tx.db.Exec(ctx, `
				INSERT INTO secret_environments (team_id, application_id, secret_id, environment_id)
				SELECT e.team_id, e.application_id, $3, e.id FROM environments e
				WHERE e.team_id = $1 AND e.application_id = $2 AND e.kind = 'environment' AND e.id = ANY($4)`,
				teamID, appID, id, a.EnvironmentIDs)
			if err != nil {
				return wrap(op, err)
			}
			if int(tag.RowsAffected()) != len(uniqueStrings(a.EnvironmentIDs)) {
				return fmt.Errorf("%s: environment_ids: %w", op, ErrNotFound)
			}
		}
		out, err = tx.GetSecret(ctx, teamID, id)
		return err
	})
	return out, err
}

func uniqueStrings(ss []string) map[string]bool {
	m := make(map[string]bool, len(ss))
	for _, s := range ss {
		m[s] = true
	}
	return m
}

// DeleteSecret marks a live secret deleted: it no longer exists for
// captures, listings or SetSecretValue (which starts a new secret of that
// name), while its versions stay readable for deployments that pinned them.
func (s *Store) DeleteSecret(ctx context.Context, teamID, id string) error {
	return s.execOne(ctx, "delete secret", `
		UPDATE secrets SET deleted_at = now(), updated_at = now()
		WHERE team_id = $1 AND id = $2 AND deleted_at IS NULL`, teamID, id)
}

// SecretCiphertext returns a version of one of the application's secrets,
// sealed, for the worker's secret source to open: the only read of a
// stored value. A deleted secret's versions are still returned, since a
// deployment that pinned one may be restored.
func (s *Store) SecretCiphertext(ctx context.Context, teamID, applicationID, secretID string, version int) (SealedRef, Sealed, error) {
	ref := SealedRef{Kind: SealedStored, TeamID: teamID, ApplicationID: applicationID, SecretID: secretID, Version: version}
	var sealed Sealed
	err := s.db.QueryRow(ctx, `
		SELECT s.name, v.key_id, v.nonce, v.ciphertext FROM secret_versions v
		JOIN secrets s ON s.team_id = v.team_id AND s.id = v.secret_id
		WHERE v.team_id = $1 AND s.application_id = $2 AND v.secret_id = $3 AND v.version = $4`,
		teamID, applicationID, secretID, version).Scan(&ref.Name, &sealed.KeyID, &sealed.Nonce, &sealed.Ciphertext)
	return ref, sealed, wrap("secret ciphertext", err)
}
