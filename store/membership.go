package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Role is a member's role in a team. The app maps roles to scopes.
type Role string

// Roles, from most to least privileged.
const (
	RoleOwner     Role = "owner"
	RoleAdmin     Role = "admin"
	RoleDeveloper Role = "developer"
	RoleViewer    Role = "viewer"
)

// Roles lists every role, most privileged first.
var Roles = []Role{RoleOwner, RoleAdmin, RoleDeveloper, RoleViewer}

// Valid reports whether r is one of Roles.
func (r Role) Valid() bool {
	for _, v := range Roles {
		if r == v {
			return true
		}
	}
	return false
}

// ErrLastOwner is returned when a change would leave a team without an owner.
var ErrLastOwner = errors.New("last_owner: a team needs at least one owner")

// Member is a user's membership of a team, with the user's details.
type Member struct {
	TeamID    string
	UserID    string
	Role      Role
	Email     string
	Name      string
	CreatedAt time.Time
}

// MemberTeam is one team a user belongs to, with the user's role in it.
type MemberTeam struct {
	Team Team
	Role Role
}

const memberColumns = `m.team_id, m.user_id, m.role, u.email, u.name, m.created_at`

func scanMember(row pgx.Row) (Member, error) {
	var m Member
	err := row.Scan(&m.TeamID, &m.UserID, &m.Role, &m.Email, &m.Name, &m.CreatedAt)
	return m, err
}

// AddMember adds the user to the team. An existing membership fails with
// a *ConflictError (code already_member).
func (s *Store) AddMember(ctx context.Context, teamID, userID string, role Role) error {
	_, err := s.db.Exec(ctx, `
		INSERT INTO memberships (team_id, user_id, role) VALUES ($1, $2, $3)`, teamID, userID, role)
	return wrap("add member", err)
}

// GetMember returns the user's membership of the team; ErrNotFound when the
// user is not a member.
func (s *Store) GetMember(ctx context.Context, teamID, userID string) (Member, error) {
	m, err := scanMember(s.db.QueryRow(ctx, `
		SELECT `+memberColumns+`
		FROM memberships m JOIN users u ON u.id = m.user_id
		WHERE m.team_id = $1 AND m.user_id = $2`, teamID, userID))
	return m, wrap("get member", err)
}

// ListMembers returns the team's members ordered by e-mail.
func (s *Store) ListMembers(ctx context.Context, teamID string) ([]Member, error) {
	rows, err := s.db.Query(ctx, `
		SELECT `+memberColumns+`
		FROM memberships m JOIN users u ON u.id = m.user_id
		WHERE m.team_id = $1
		ORDER BY lower(u.email)`, teamID)
	if err != nil {
		return nil, wrap("list members", err)
	}
	ms, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Member, error) { return scanMember(r) })
	return ms, wrap("list members", err)
}

// ListUserTeams returns every team the user belongs to, ordered by name.
// It is keyed by user: it is how a session finds the teams it may switch to.
func (s *Store) ListUserTeams(ctx context.Context, userID string) ([]MemberTeam, error) {
	rows, err := s.db.Query(ctx, `
		SELECT t.id, t.name, t.slug, t.created_at, t.updated_at, m.role
		FROM memberships m JOIN teams t ON t.id = m.team_id
		WHERE m.user_id = $1
		ORDER BY lower(t.name), t.id`, userID)
	if err != nil {
		return nil, wrap("list user teams", err)
	}
	ts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (MemberTeam, error) {
		var mt MemberTeam
		err := r.Scan(&mt.Team.ID, &mt.Team.Name, &mt.Team.Slug, &mt.Team.CreatedAt, &mt.Team.UpdatedAt, &mt.Role)
		return mt, err
	})
	return ts, wrap("list user teams", err)
}

// UpdateMemberRole changes a member's role. Demoting the last owner fails
// with ErrLastOwner.
func (s *Store) UpdateMemberRole(ctx context.Context, teamID, userID string, role Role) error {
	return s.changeMember(ctx, "update member role", teamID, userID, role != RoleOwner, `
		UPDATE memberships SET role = $3, updated_at = now()
		WHERE team_id = $1 AND user_id = $2`, teamID, userID, role)
}

// RemoveMember removes the user from the team. Removing the last owner
// fails with ErrLastOwner.
func (s *Store) RemoveMember(ctx context.Context, teamID, userID string) error {
	return s.changeMember(ctx, "remove member", teamID, userID, true, `
		DELETE FROM memberships WHERE team_id = $1 AND user_id = $2`, teamID, userID)
}

// changeMember runs a membership change in a transaction that locks the
// team's memberships, so two concurrent demotions cannot both pass the
// last-owner check.
func (s *Store) changeMember(ctx context.Context, op, teamID, userID string, losesOwner bool, sql string, args ...any) error {
	return s.WithTx(ctx, func(tx *Store) error {
		rows, err := tx.db.Query(ctx, `
			SELECT user_id, role FROM memberships WHERE team_id = $1 FOR UPDATE`, teamID)
		if err != nil {
			return wrap(op, err)
		}
		owners, found := 0, false
		var current Role
		for rows.Next() {
			var uid string
			var r Role
			if err := rows.Scan(&uid, &r); err != nil {
				rows.Close()
				return wrap(op, err)
			}
			if r == RoleOwner {
				owners++
			}
			if uid == userID {
				found, current = true, r
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return wrap(op, err)
		}
		if !found {
			return fmt.Errorf("%s: %w", op, ErrNotFound)
		}
		if losesOwner && current == RoleOwner && owners == 1 {
			return fmt.Errorf("%s: %w", op, ErrLastOwner)
		}
		return tx.execOne(ctx, op, sql, args...)
	})
}
