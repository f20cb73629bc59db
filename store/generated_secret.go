package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// GeneratedSecret is the metadata of an environment's generated value:
// never the value.
type GeneratedSecret struct {
	TeamID         string
	ApplicationID  string
	EnvironmentID  string
	Name           string
	CurrentVersion int
	// Regenerate is true after a regenerate request, until the next
	// capture generates the new version.
	Regenerate  bool
	GeneratedAt time.Time // of the current version
	CreatedAt   time.Time
}

const generatedSecretColumns = `g.team_id, g.application_id, g.environment_id, g.name, g.current_version, g.regenerate,
	coalesce((SELECT v.generated_at FROM generated_secret_versions v
		WHERE v.team_id = g.team_id AND v.environment_id = g.environment_id AND v.name = g.name
		AND v.version = g.current_version), g.created_at),
	g.created_at`

func scanGeneratedSecret(row pgx.Row) (GeneratedSecret, error) {
	var g GeneratedSecret
	err := row.Scan(&g.TeamID, &g.ApplicationID, &g.EnvironmentID, &g.Name, &g.CurrentVersion, &g.Regenerate,
		&g.GeneratedAt, &g.CreatedAt)
	return g, err
}

// EnsureGeneratedSecret returns the version of the environment's generated
// value name, generating one first when there is none yet or a regenerate
// was requested: generate is then called once, inside the transaction and
// with the row locked, with the row the new value goes into, and returns it
// sealed. Otherwise the existing version is kept, whatever the declaration
// says now. created tells whether a version was generated. The environment
// must exist in the team (ErrNotFound otherwise). generatedBy names the
// deployment that asked.
func (s *Store) EnsureGeneratedSecret(ctx context.Context, teamID, environmentID, name, generatedBy string,
	generate func(SealedRef) (Sealed, error)) (version int, created bool, err error) {
	const op = "ensure generated secret"
	err = s.WithTx(ctx, func(tx *Store) error {
		if _, err := tx.db.Exec(ctx, `
			INSERT INTO generated_secrets (team_id, application_id, environment_id, name)
			SELECT e.team_id, e.application_id, e.id, $3 FROM environments e
			WHERE e.team_id = $1 AND e.id = $2
			ON CONFLICT (environment_id, name) DO NOTHING`, teamID, environmentID, name); err != nil {
			return wrap(op, err)
		}
		ref := SealedRef{Kind: SealedGenerated, TeamID: teamID, EnvironmentID: environmentID, Name: name}
		var regenerate bool
		err := tx.db.QueryRow(ctx, `
			SELECT application_id, current_version, regenerate FROM generated_secrets
			WHERE team_id = $1 AND environment_id = $2 AND name = $3
			FOR UPDATE`, teamID, environmentID, name).Scan(&ref.ApplicationID, &version, &regenerate)
		if err != nil {
			return wrap(op, err)
		}
		if version > 0 && !regenerate {
			return nil
		}
		ref.Version = version + 1
		sealed, err := generate(ref)
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		if _, err := tx.db.Exec(ctx, `
			INSERT INTO generated_secret_versions (team_id, environment_id, name, version, key_id, nonce, ciphertext, generated_by)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			teamID, environmentID, name, ref.Version, sealed.KeyID, sealed.Nonce, sealed.Ciphertext, generatedBy); err != nil {
			return wrap(op, err)
		}
		if _, err := tx.db.Exec(ctx, `
			UPDATE generated_secrets SET current_version = $4, regenerate = false, updated_at = now()
			WHERE team_id = $1 AND environment_id = $2 AND name = $3`,
			teamID, environmentID, name, ref.Version); err != nil {
			return wrap(op, err)
		}
		version, created = ref.Version, true
		return nil
	})
	if err != nil {
		return 0, false, err
	}
	return version, created, nil
}

// GetGeneratedSecret returns the metadata of an environment's generated
// value.
func (s *Store) GetGeneratedSecret(ctx context.Context, teamID, environmentID, name string) (GeneratedSecret, error) {
	g, err := scanGeneratedSecret(s.db.QueryRow(ctx, `
		SELECT `+generatedSecretColumns+` FROM generated_secrets g
		WHERE g.team_id = $1 AND g.environment_id = $2 AND g.name = $3`, teamID, environmentID, name))
	return g, wrap("get generated secret", err)
}

// ListGeneratedSecrets returns the metadata of an environment's generated
// values, by name. Values whose declaration was removed are listed too:
// they are retained.
func (s *Store) ListGeneratedSecrets(ctx context.Context, teamID, environmentID string) ([]GeneratedSecret, error) {
	rows, err := s.db.Query(ctx, `
		SELECT `+generatedSecretColumns+` FROM generated_secrets g
		WHERE g.team_id = $1 AND g.environment_id = $2
		ORDER BY g.name`, teamID, environmentID)
	if err != nil {
		return nil, wrap("list generated secrets", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (GeneratedSecret, error) { return scanGeneratedSecret(r) })
	return out, wrap("list generated secrets", err)
}

// RequestSecretRegeneration asks the environment's next capture to
// generate a new version of name; running deployments keep theirs.
// A value never generated is ErrNotFound: its first deployment generates it.
func (s *Store) RequestSecretRegeneration(ctx context.Context, teamID, environmentID, name string) (GeneratedSecret, error) {
	g, err := scanGeneratedSecret(s.db.QueryRow(ctx, `
		UPDATE generated_secrets g SET regenerate = true, updated_at = now()
		WHERE g.team_id = $1 AND g.environment_id = $2 AND g.name = $3 AND g.current_version > 0
		RETURNING `+generatedSecretColumns, teamID, environmentID, name))
	return g, wrap("request secret regeneration", err)
}

// GeneratedSecretCiphertext returns a version of an environment's generated
// value, sealed, for the worker's secret source to open.
func (s *Store) GeneratedSecretCiphertext(ctx context.Context, teamID, environmentID, name string, version int) (SealedRef, Sealed, error) {
	ref := SealedRef{Kind: SealedGenerated, TeamID: teamID, EnvironmentID: environmentID, Name: name, Version: version}
	var sealed Sealed
	err := s.db.QueryRow(ctx, `
		SELECT g.application_id, v.key_id, v.nonce, v.ciphertext FROM generated_secret_versions v
		JOIN generated_secrets g ON g.environment_id = v.environment_id AND g.name = v.name
		WHERE v.team_id = $1 AND v.environment_id = $2 AND v.name = $3 AND v.version = $4`,
		teamID, environmentID, name, version).Scan(&ref.ApplicationID, &sealed.KeyID, &sealed.Nonce, &sealed.Ciphertext)
	return ref, sealed, wrap("generated secret ciphertext", err)
}

// CountSealedByKey counts stored and generated values and registry
// passwords per key id, across
// every team (maintenance: key rotation reports and checks with it).
func (s *Store) CountSealedByKey(ctx context.Context) (map[string]int, error) {
	rows, err := s.db.Query(ctx, `
		SELECT key_id, count(*) FROM (
			SELECT key_id FROM secret_versions
			UNION ALL
			SELECT key_id FROM generated_secret_versions
			UNION ALL
			SELECT key_id FROM registry_credentials
		) k GROUP BY key_id`)
	if err != nil {
		return nil, wrap("count sealed by key", err)
	}
	out := map[string]int{}
	var id string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&id, &n}, func() error { out[id] = n; return nil })
	return out, wrap("count sealed by key", err)
}

// resealBatch bounds how many rows one transaction of ResealAll locks.
const resealBatch = 100

// ResealAll re-seals every stored and generated value, and every registry
// password, that is not sealed under keepKeyID, across every team
// (maintenance: key rotation). reseal gets each row and its current
// sealing and returns the new one; it is called inside a transaction
// holding the row, in batches, so a crash leaves every row sealed under
// one key or the other. It returns how many rows it re-sealed; an error
// from reseal stops it.
func (s *Store) ResealAll(ctx context.Context, keepKeyID string, reseal func(SealedRef, Sealed) (Sealed, error)) (int, error) {
	total := 0
	for _, q := range []struct{ kind, selectSQL, updateSQL string }{
		{"stored", `
			SELECT v.team_id, s.application_id, v.secret_id, s.name, v.version, v.key_id, v.nonce, v.ciphertext
			FROM secret_versions v JOIN secrets s ON s.team_id = v.team_id AND s.id = v.secret_id
			WHERE v.key_id <> $1 LIMIT $2 FOR UPDATE OF v`, `
			UPDATE secret_versions SET key_id = $5, nonce = $6, ciphertext = $7
			WHERE team_id = $1 AND secret_id = $2 AND version = $3 AND key_id = $4`},
		{"generated", `
			SELECT v.team_id, g.application_id, v.environment_id, v.name, v.version, v.key_id, v.nonce, v.ciphertext
			FROM generated_secret_versions v JOIN generated_secrets g ON g.environment_id = v.environment_id AND g.name = v.name
			WHERE v.key_id <> $1 LIMIT $2 FOR UPDATE OF v`, `
			UPDATE generated_secret_versions SET key_id = $6, nonce = $7, ciphertext = $8
			WHERE team_id = $1 AND environment_id = $2 AND name = $3 AND version = $4 AND key_id = $5`},
		{"registry", `
			SELECT team_id, '', id, host, 1, key_id, nonce, ciphertext FROM registry_credentials
			WHERE key_id <> $1 LIMIT $2 FOR UPDATE`, `
			UPDATE registry_credentials SET key_id = $5, nonce = $6, ciphertext = $7
			WHERE team_id = $1 AND id = $2 AND $3::int = 1 AND key_id = $4`},
	} {
		for {
			n, err := s.resealBatch(ctx, keepKeyID, q.kind, q.selectSQL, q.updateSQL, reseal)
			total += n
			if err != nil {
				return total, err
			}
			if n < resealBatch {
				break
			}
		}
	}
	return total, nil
}

func (s *Store) resealBatch(ctx context.Context, keepKeyID, kind, selectSQL, updateSQL string,
	reseal func(SealedRef, Sealed) (Sealed, error)) (int, error) {
	op := "reseal " + kind + " secrets"
	n := 0
	err := s.WithTx(ctx, func(tx *Store) error {
		rows, err := tx.db.Query(ctx, selectSQL, keepKeyID, resealBatch)
		if err != nil {
			return wrap(op, err)
		}
		type row struct {
			ref    SealedRef
			sealed Sealed
		}
		batch, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
			var x row
			var owner string // secret id or environment id
			err := r.Scan(&x.ref.TeamID, &x.ref.ApplicationID, &owner, &x.ref.Name, &x.ref.Version,
				&x.sealed.KeyID, &x.sealed.Nonce, &x.sealed.Ciphertext)
			switch kind {
			case "stored", "registry":
				x.ref.Kind, x.ref.SecretID = SealedKind(kind), owner
			default:
				x.ref.Kind, x.ref.EnvironmentID = SealedGenerated, owner
			}
			return x, err
		})
		if err != nil {
			return wrap(op, err)
		}
		for _, x := range batch {
			next, err := reseal(x.ref, x.sealed)
			if err != nil {
				return fmt.Errorf("%s: %w", op, err)
			}
			if next.KeyID != keepKeyID {
				// The row would be selected again and again.
				return fmt.Errorf("%s: resealed under key %q, want %q", op, next.KeyID, keepKeyID)
			}
			args := []any{x.ref.TeamID}
			if kind != "generated" {
				args = append(args, x.ref.SecretID)
			} else {
				args = append(args, x.ref.EnvironmentID, x.ref.Name)
			}
			args = append(args, x.ref.Version, x.sealed.KeyID, next.KeyID, next.Nonce, next.Ciphertext)
			if _, err := tx.db.Exec(ctx, updateSQL, args...); err != nil {
				return wrap(op, err)
			}
		}
		n = len(batch)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
