package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Session is a signed-in browser. ID is the sha-256 of the cookie token
// (HashToken); sessions are keyed by it, not by team.
type Session struct {
	ID            []byte
	UserID        string
	CurrentTeamID string // "" when the user has no team selected
	CSRFSecret    []byte
	ExpiresAt     time.Time
	CreatedAt     time.Time
	LastSeenAt    time.Time
}

const sessionColumns = `id, user_id, coalesce(current_team_id, ''), csrf_secret, expires_at, created_at, last_seen_at`

func scanSession(row pgx.Row) (Session, error) {
	var s Session
	err := row.Scan(&s.ID, &s.UserID, &s.CurrentTeamID, &s.CSRFSecret, &s.ExpiresAt, &s.CreatedAt, &s.LastSeenAt)
	return s, err
}

// CreateSession stores a new session. CurrentTeamID may be empty; when set,
// the user must be a member of that team.
func (s *Store) CreateSession(ctx context.Context, sess Session) (Session, error) {
	out, err := scanSession(s.db.QueryRow(ctx, `
		INSERT INTO sessions (id, user_id, current_team_id, csrf_secret, expires_at)
		VALUES ($1, $2, nullif($3, ''), $4, $5)
		RETURNING `+sessionColumns, sess.ID, sess.UserID, sess.CurrentTeamID, sess.CSRFSecret, sess.ExpiresAt))
	return out, wrap("create session", err)
}

// SignedIn is an unexpired session with its user and every team the user
// belongs to, ordered by name.
type SignedIn struct {
	Session Session
	User    User
	Teams   []MemberTeam
}

// GetSignedIn returns an unexpired session with its user and the user's
// teams, in one query: the dashboard reads them on every request.
func (s *Store) GetSignedIn(ctx context.Context, id []byte) (SignedIn, error) {
	const op = "get signed-in session"
	rows, err := s.db.Query(ctx, `
		SELECT s.id, s.user_id, coalesce(s.current_team_id, ''), s.csrf_secret, s.expires_at, s.created_at, s.last_seen_at,
			u.id, u.email, u.name, u.password_hash, u.installation_admin, u.created_at, u.updated_at,
			t.id, t.name, t.slug, t.created_at, t.updated_at, m.role
		FROM sessions s JOIN users u ON u.id = s.user_id
		LEFT JOIN memberships m ON m.user_id = u.id
		LEFT JOIN teams t ON t.id = m.team_id
		WHERE s.id = $1 AND s.expires_at > now()
		ORDER BY lower(t.name), t.id`, id)
	if err != nil {
		return SignedIn{}, wrap(op, err)
	}
	defer rows.Close()
	var in SignedIn
	found := false
	for rows.Next() {
		sess, u := &in.Session, &in.User
		// A user in no team has one row with NULL team columns.
		var teamID, name, slug, role *string
		var created, updated *time.Time
		if err := rows.Scan(&sess.ID, &sess.UserID, &sess.CurrentTeamID, &sess.CSRFSecret, &sess.ExpiresAt, &sess.CreatedAt, &sess.LastSeenAt,
			&u.ID, &u.Email, &u.Name, &u.PasswordHash, &u.InstallationAdmin, &u.CreatedAt, &u.UpdatedAt,
			&teamID, &name, &slug, &created, &updated, &role); err != nil {
			return SignedIn{}, wrap(op, err)
		}
		found = true
		if teamID != nil {
			in.Teams = append(in.Teams, MemberTeam{
				Team: Team{ID: *teamID, Name: *name, Slug: *slug, CreatedAt: *created, UpdatedAt: *updated},
				Role: Role(*role),
			})
		}
	}
	if err := rows.Err(); err != nil {
		return SignedIn{}, wrap(op, err)
	}
	if !found {
		return SignedIn{}, wrap(op, ErrNotFound)
	}
	return in, nil
}

// TouchSession records activity and slides the expiry to expiresAt.
func (s *Store) TouchSession(ctx context.Context, id []byte, expiresAt time.Time) error {
	return s.execOne(ctx, "touch session", `
		UPDATE sessions SET last_seen_at = now(), expires_at = $2
		WHERE id = $1 AND expires_at > now()`, id, expiresAt)
}

// SetSessionTeam switches the session's current team. It fails with
// ErrNotFound when the session's user is not a member of teamID, so a
// forged team switch cannot succeed.
func (s *Store) SetSessionTeam(ctx context.Context, id []byte, teamID string) error {
	return s.execOne(ctx, "set session team", `
		UPDATE sessions s SET current_team_id = $2
		WHERE s.id = $1 AND s.expires_at > now()
		  AND EXISTS (SELECT 1 FROM memberships m WHERE m.team_id = $2 AND m.user_id = s.user_id)`, id, teamID)
}

// DeleteSession ends one session (logout). Deleting a missing session is
// not an error: logging out twice is fine.
func (s *Store) DeleteSession(ctx context.Context, id []byte) error {
	_, err := s.db.Exec(ctx, `DELETE FROM sessions WHERE id = $1`, id)
	return wrap("delete session", err)
}

// DeleteUserSessions ends every session of the user (password change),
// except the one with id keep (nil keeps none). It returns how many ended.
func (s *Store) DeleteUserSessions(ctx context.Context, userID string, keep []byte) (int64, error) {
	tag, err := s.db.Exec(ctx, `
		DELETE FROM sessions WHERE user_id = $1 AND ($2::bytea IS NULL OR id <> $2)`, userID, keep)
	return tag.RowsAffected(), wrap("delete user sessions", err)
}

// DeleteExpiredSessions removes sessions that expired before now and
// returns how many; the session_cleanup job calls it.
func (s *Store) DeleteExpiredSessions(ctx context.Context, now time.Time) (int64, error) {
	tag, err := s.db.Exec(ctx, `DELETE FROM sessions WHERE expires_at <= $1`, now)
	return tag.RowsAffected(), wrap("delete expired sessions", err)
}
