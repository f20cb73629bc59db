package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrNotFound is returned when a row does not exist, or exists in another
// team: callers cannot tell the two apart, by design.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned when a write would violate a uniqueness rule.
// The concrete error is a *ConflictError naming the constraint and field.
var ErrConflict = errors.New("conflict")

// ConflictError describes a unique (or exclusion) violation.
type ConflictError struct {
	// Constraint is the Postgres constraint or index name.
	Constraint string
	// Field is the user-facing field the conflict is about, such as "email"
	// or "name"; empty when no single field is to blame.
	Field string
	// Code is a snake_case code for API errors, such as "email_taken".
	Code string
	// Value is the value that collided, when the store knows it (the
	// hostname of a hostname_conflict).
	Value string
}

func (e *ConflictError) Error() string {
	if e.Value != "" {
		return fmt.Sprintf("conflict on %s %q (%s)", e.Field, e.Value, e.Code)
	}
	if e.Field != "" {
		return fmt.Sprintf("conflict on %s (%s)", e.Field, e.Code)
	}
	return "conflict: " + e.Constraint
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// conflicts maps constraint names to the field and code an API reports.
var conflicts = map[string]struct{ field, code string }{
	"teams_slug_key":                                 {"slug", "team_slug_taken"},
	"users_email_key":                                {"email", "email_taken"},
	"memberships_pkey":                               {"user_id", "already_member"},
	"invitations_token_hash_key":                     {"token", "token_taken"},
	"api_tokens_token_hash_key":                      {"token", "token_taken"},
	"applications_team_id_name_key":                  {"name", "application_name_taken"},
	"manifest_revisions_application_id_revision_key": {"revision", "revision_conflict"},
	"environments_application_id_name_key":           {"name", "environment_name_taken"},
	"environments_application_id_slug_key":           {"slug", "environment_slug_taken"},
	"environments_preview_branch_slot_key":           {"branch", "preview_exists"},
	"deployments_one_active_key":                     {"environment_id", "deployment_in_progress"},
	"deployments_one_requested_key":                  {"environment_id", "deployment_queued"},
	"hostname_reservations_pkey":                     {"hostname", "hostname_conflict"},
	"restores_one_active_key":                        {"environment_id", "restore_in_progress"},
}

// ErrInvalid is returned when a row breaks a CHECK constraint: the caller
// passed a value the schema refuses (the app validates first; this is the
// backstop). The concrete error is an *InvalidError.
var ErrInvalid = errors.New("invalid")

// InvalidError names the CHECK constraint a write broke.
type InvalidError struct {
	Constraint string
}

func (e *InvalidError) Error() string { return "invalid value: " + e.Constraint }

// Is makes errors.Is(err, ErrInvalid) true.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

// DBTX is what both a pool and a transaction offer; a Store runs its queries
// through one of them.
type DBTX interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Store is Slipway's Postgres storage. Its zero value is unusable; build it
// with New (or OnTx). A Store is safe for concurrent use when it wraps a pool;
// one bound to a transaction (inside WithTx) is not.
type Store struct {
	pool *pgxpool.Pool
	db   DBTX
	tx   pgx.Tx
}

// New returns a Store running its queries on pool.
func New(pool *pgxpool.Pool) *Store {
	return &Store{pool: pool, db: pool}
}

// OnTx returns a Store bound to transaction tx (Tx returns it) that runs
// its queries, and begins WithTx's savepoints, through db. storetest binds
// one to a test's transaction through a db that gives every statement a
// savepoint of its own.
func OnTx(db DBTX, tx pgx.Tx) *Store {
	return &Store{db: db, tx: tx}
}

// Pool returns the pool the Store was built on, or nil for OnTx stores.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Tx returns the transaction the Store is bound to, or nil outside WithTx.
// Pass it to River's InsertTx so a job commits with the row it acts on.
func (s *Store) Tx() pgx.Tx { return s.tx }

// WithTx runs fn with a Store bound to a new transaction (a savepoint when s
// is already in one), committing when fn returns nil and rolling back
// otherwise. fn's error is returned unchanged.
func (s *Store) WithTx(ctx context.Context, fn func(tx *Store) error) error {
	tx, err := s.db.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	// Rollback after Commit is a no-op; this covers fn's errors and panics.
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := fn(&Store{pool: s.pool, db: tx, tx: tx}); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit transaction: %w", mapError(err))
	}
	return nil
}

// HashToken returns the sha-256 of a secret token (session cookie, API
// token, invitation link); only hashes are stored.
func HashToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newID returns "<prefix>_" and 26 random lowercase base32 characters
// (128 bits): safe in URLs, DNS labels and Swarm object names.
func newID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return prefix + "_" + idEncoding.EncodeToString(b[:])
}

// ShortID returns the random part's first 12 characters, for names that must
// stay short (Swarm objects); 60 bits keep collisions out of reach.
func ShortID(id string) string {
	if i := strings.IndexByte(id, '_'); i >= 0 {
		id = id[i+1:]
	}
	if len(id) > 12 {
		id = id[:12]
	}
	return id
}

// mapError turns pgx's no-rows into ErrNotFound, unique violations into a
// *ConflictError, a reference to a missing row into ErrNotFound and a CHECK
// violation into an *InvalidError; anything else is returned as is.
func mapError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return err
	}
	switch pgErr.Code {
	case "23505": // unique_violation
		c, ok := conflicts[pgErr.ConstraintName]
		if !ok {
			return &ConflictError{Constraint: pgErr.ConstraintName, Code: "conflict"}
		}
		return &ConflictError{Constraint: pgErr.ConstraintName, Field: c.field, Code: c.code}
	case "23503": // foreign_key_violation: the referenced row does not exist
		return fmt.Errorf("%w (%s)", ErrNotFound, pgErr.ConstraintName)
	case "23514": // check_violation
		return &InvalidError{Constraint: pgErr.ConstraintName}
	}
	return err
}

// wrap names the operation and maps the error; nil stays nil.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	err = mapError(err)
	return fmt.Errorf("%s: %w", op, err)
}

// execOne runs a statement that must touch exactly one row and returns
// ErrNotFound when it touched none.
func (s *Store) execOne(ctx context.Context, op, sql string, args ...any) error {
	tag, err := s.db.Exec(ctx, sql, args...)
	if err != nil {
		return wrap(op, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s: %w", op, ErrNotFound)
	}
	return nil
}

func errNotInTx(op string) error {
	return fmt.Errorf("%s: must run inside WithTx", op)
}

// prefixColumns qualifies a column list with a table alias for joins:
// prefixColumns("r", "id, name") is "r.id, r.name". Plain column names
// only: an expression such as coalesce(x, ”) would come out wrong.
func prefixColumns(alias, columns string) string {
	parts := strings.Split(columns, ",")
	for i, p := range parts {
		parts[i] = alias + "." + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}
