package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Invitation is a single-use, expiring link that adds its acceptor to a
// team with a role. Only the sha-256 of the link's token is stored.
type Invitation struct {
	ID         string
	TeamID     string
	Email      string
	Role       Role
	TokenHash  []byte
	InvitedBy  string // "" once the inviting user is deleted
	ExpiresAt  time.Time
	AcceptedAt *time.Time
	AcceptedBy string
	CreatedAt  time.Time
}

// Invitation acceptance failures, beside ErrNotFound for an unknown token.
var (
	ErrInvitationExpired = errors.New("invitation_expired: the invitation has expired")
	ErrInvitationUsed    = errors.New("invitation_used: the invitation was already accepted")
	// ErrInvitationEmailMismatch: the accepting account's e-mail address
	// is not the invited one (compared ignoring case).
	ErrInvitationEmailMismatch = errors.New("invitation_email_mismatch: the invitation was sent to another e-mail address")
)

// InvitationParams are the fields of a new invitation.
type InvitationParams struct {
	Email     string
	Role      Role
	TokenHash []byte
	InvitedBy string
	ExpiresAt time.Time
}

const invitationColumns = `id, team_id, email, role, token_hash, coalesce(invited_by, ''),
	expires_at, accepted_at, coalesce(accepted_by, ''), created_at`

func scanInvitation(row pgx.Row) (Invitation, error) {
	var i Invitation
	err := row.Scan(&i.ID, &i.TeamID, &i.Email, &i.Role, &i.TokenHash, &i.InvitedBy,
		&i.ExpiresAt, &i.AcceptedAt, &i.AcceptedBy, &i.CreatedAt)
	return i, err
}

// CreateInvitation stores an invitation to the team.
func (s *Store) CreateInvitation(ctx context.Context, teamID string, p InvitationParams) (Invitation, error) {
	i, err := scanInvitation(s.db.QueryRow(ctx, `
		INSERT INTO invitations (id, team_id, email, role, token_hash, invited_by, expires_at)
		VALUES ($1, $2, $3, $4, $5, nullif($6, ''), $7)
		RETURNING `+invitationColumns,
		newID("inv"), teamID, p.Email, p.Role, p.TokenHash, p.InvitedBy, p.ExpiresAt))
	return i, wrap("create invitation", err)
}

// GetInvitation returns one of the team's invitations.
func (s *Store) GetInvitation(ctx context.Context, teamID, id string) (Invitation, error) {
	i, err := scanInvitation(s.db.QueryRow(ctx, `
		SELECT `+invitationColumns+` FROM invitations WHERE team_id = $1 AND id = $2`, teamID, id))
	return i, wrap("get invitation", err)
}

// ListPendingInvitations returns the team's invitations not yet accepted
// and not expired, newest first.
func (s *Store) ListPendingInvitations(ctx context.Context, teamID string) ([]Invitation, error) {
	rows, err := s.db.Query(ctx, `
		SELECT `+invitationColumns+` FROM invitations
		WHERE team_id = $1 AND accepted_at IS NULL AND expires_at > now()
		ORDER BY created_at DESC, id`, teamID)
	if err != nil {
		return nil, wrap("list invitations", err)
	}
	is, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Invitation, error) { return scanInvitation(r) })
	return is, wrap("list invitations", err)
}

// DeleteInvitation withdraws one of the team's invitations.
func (s *Store) DeleteInvitation(ctx context.Context, teamID, id string) error {
	return s.execOne(ctx, "delete invitation", `
		DELETE FROM invitations WHERE team_id = $1 AND id = $2`, teamID, id)
}

// GetInvitationByToken finds an invitation by its token hash, so the accept
// page can show the team and role before sign-in. It is keyed by the secret
// token, which is what grants access; it does not check expiry.
func (s *Store) GetInvitationByToken(ctx context.Context, tokenHash []byte) (Invitation, error) {
	i, err := scanInvitation(s.db.QueryRow(ctx, `
		SELECT `+invitationColumns+` FROM invitations WHERE token_hash = $1`, tokenHash))
	return i, wrap("get invitation by token", err)
}

// AcceptInvitation marks the invitation accepted by userID and makes the
// user a member with the invitation's role, atomically. The invitation is
// bound to its e-mail address: only the account with that address (in any
// case) can accept it. It fails with ErrNotFound, ErrInvitationExpired,
// ErrInvitationUsed or ErrInvitationEmailMismatch, and with a
// *ConflictError (already_member) when the user is already in the team; in
// every failure nothing changes.
func (s *Store) AcceptInvitation(ctx context.Context, tokenHash []byte, userID string, now time.Time) (Invitation, error) {
	const op = "accept invitation"
	var inv Invitation
	err := s.WithTx(ctx, func(tx *Store) error {
		var err error
		// FOR UPDATE: two tabs accepting the same link race here, and the
		// second one sees accepted_at set.
		inv, err = scanInvitation(tx.db.QueryRow(ctx, `
			SELECT `+invitationColumns+` FROM invitations WHERE token_hash = $1 FOR UPDATE`, tokenHash))
		if err != nil {
			return wrap(op, err)
		}
		switch {
		case inv.AcceptedAt != nil:
			return fmt.Errorf("%s: %w", op, ErrInvitationUsed)
		case !now.Before(inv.ExpiresAt):
			return fmt.Errorf("%s: %w", op, ErrInvitationExpired)
		}
		var matches bool
		if err := tx.db.QueryRow(ctx, `
			SELECT lower(email) = lower($2) FROM users WHERE id = $1`, userID, inv.Email).Scan(&matches); err != nil {
			return wrap(op, err)
		}
		if !matches {
			return fmt.Errorf("%s: %w", op, ErrInvitationEmailMismatch)
		}
		inv, err = scanInvitation(tx.db.QueryRow(ctx, `
			UPDATE invitations SET accepted_at = $3, accepted_by = $4
			WHERE team_id = $1 AND id = $2
			RETURNING `+invitationColumns, inv.TeamID, inv.ID, now, userID))
		if err != nil {
			return wrap(op, err)
		}
		return tx.AddMember(ctx, inv.TeamID, userID, inv.Role)
	})
	if err != nil {
		return Invitation{}, err
	}
	return inv, nil
}
