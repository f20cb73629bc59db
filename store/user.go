package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// User is a person who can sign in. Users are not team-scoped: one user may
// belong to several teams through memberships.
type User struct {
	ID           string
	Email        string
	Name         string
	PasswordHash string
	// InstallationAdmin users see the installation itself (the Swarm's
	// nodes), whatever their teams: the first user, and whoever an
	// operator grants it to.
	InstallationAdmin bool
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

const userColumns = `id, email, name, password_hash, installation_admin, created_at, updated_at`

func scanUser(row pgx.Row) (User, error) {
	var u User
	err := row.Scan(&u.ID, &u.Email, &u.Name, &u.PasswordHash, &u.InstallationAdmin, &u.CreatedAt, &u.UpdatedAt)
	return u, err
}

// CreateUser creates a user; the installation's first user is its
// installation admin. A taken e-mail address (in any case) fails with a
// *ConflictError whose Field is "email".
func (s *Store) CreateUser(ctx context.Context, email, name, passwordHash string) (User, error) {
	u, err := scanUser(s.db.QueryRow(ctx, `
		INSERT INTO users (id, email, name, password_hash, installation_admin)
		VALUES ($1, $2, $3, $4, NOT EXISTS (SELECT 1 FROM users))
		RETURNING `+userColumns, newID("usr"), email, name, passwordHash))
	return u, wrap("create user", err)
}

// GetUser returns the user.
func (s *Store) GetUser(ctx context.Context, userID string) (User, error) {
	u, err := scanUser(s.db.QueryRow(ctx, `
		SELECT `+userColumns+` FROM users WHERE id = $1`, userID))
	return u, wrap("get user", err)
}

// GetUserByEmail finds a user by e-mail address, ignoring case.
func (s *Store) GetUserByEmail(ctx context.Context, email string) (User, error) {
	u, err := scanUser(s.db.QueryRow(ctx, `
		SELECT `+userColumns+` FROM users WHERE lower(email) = lower($1)`, email))
	return u, wrap("get user by email", err)
}

// UpdateUserName changes the user's display name.
func (s *Store) UpdateUserName(ctx context.Context, userID, name string) error {
	return s.execOne(ctx, "update user name", `
		UPDATE users SET name = $2, updated_at = now() WHERE id = $1`, userID, name)
}

// UpdateUserPassword replaces the user's password hash.
func (s *Store) UpdateUserPassword(ctx context.Context, userID, passwordHash string) error {
	return s.execOne(ctx, "update user password", `
		UPDATE users SET password_hash = $2, updated_at = now() WHERE id = $1`, userID, passwordHash)
}

// SetInstallationAdmin grants or revokes a user's installation admin
// (maintenance: slipway admin installation-admin).
func (s *Store) SetInstallationAdmin(ctx context.Context, userID string, admin bool) error {
	return s.execOne(ctx, "set installation admin", `
		UPDATE users SET installation_admin = $2, updated_at = now() WHERE id = $1`, userID, admin)
}

// ListInstallationAdmins returns the installation admins by e-mail.
func (s *Store) ListInstallationAdmins(ctx context.Context) ([]User, error) {
	rows, err := s.db.Query(ctx, `SELECT `+userColumns+` FROM users WHERE installation_admin ORDER BY lower(email)`)
	if err != nil {
		return nil, wrap("list installation admins", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (User, error) { return scanUser(r) })
	return out, wrap("list installation admins", err)
}

// CountUsers returns how many users exist; 0 means a fresh installation
// that offers first-run sign-up.
func (s *Store) CountUsers(ctx context.Context) (int64, error) {
	var n int64
	err := s.db.QueryRow(ctx, `SELECT count(*) FROM users`).Scan(&n)
	return n, wrap("count users", err)
}

// firstRunLockKey is the advisory lock key serializing first-run sign-up.
const firstRunLockKey = 0x736c_6970_0001

// LockFirstRun takes a transaction-scoped lock so two concurrent first-run
// sign-ups cannot both see an empty installation. Call it inside WithTx,
// then CountUsers.
func (s *Store) LockFirstRun(ctx context.Context) error {
	if s.tx == nil {
		return errNotInTx("lock first run")
	}
	_, err := s.db.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(firstRunLockKey))
	return wrap("lock first run", err)
}
