package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// APIToken is a team's API token. Only the sha-256 of the token is stored;
// the token itself is shown once, at creation.
type APIToken struct {
	ID         string
	TeamID     string
	Name       string
	TokenHash  []byte
	Scopes     []string
	ExpiresAt  *time.Time
	LastUsedAt *time.Time
	CreatedBy  string // "" for tokens created by the system or a deleted user
	CreatedAt  time.Time
	RevokedAt  *time.Time
	// CreatorRole is the creator's role in the token's team now, "" when
	// they are no longer a member; only AuthenticateAPIToken sets it.
	CreatorRole Role
}

// APITokenParams are the fields of a new token.
type APITokenParams struct {
	Name      string
	TokenHash []byte
	Scopes    []string
	ExpiresAt *time.Time
	CreatedBy string
}

const apiTokenColumns = `id, team_id, name, token_hash, scopes, expires_at, last_used_at,
	coalesce(created_by, ''), created_at, revoked_at`

func scanAPIToken(row pgx.Row) (APIToken, error) {
	var t APIToken
	err := row.Scan(&t.ID, &t.TeamID, &t.Name, &t.TokenHash, &t.Scopes, &t.ExpiresAt, &t.LastUsedAt,
		&t.CreatedBy, &t.CreatedAt, &t.RevokedAt)
	return t, err
}

// lastUsedGranularity bounds how often authentication writes last_used_at:
// a busy script would otherwise turn every read into a write.
const lastUsedGranularity = time.Minute

// CreateAPIToken stores a token for the team.
func (s *Store) CreateAPIToken(ctx context.Context, teamID string, p APITokenParams) (APIToken, error) {
	scopes := p.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	t, err := scanAPIToken(s.db.QueryRow(ctx, `
		INSERT INTO api_tokens (id, team_id, name, token_hash, scopes, expires_at, created_by)
		VALUES ($1, $2, $3, $4, $5, $6, nullif($7, ''))
		RETURNING `+apiTokenColumns,
		newID("tok"), teamID, p.Name, p.TokenHash, scopes, p.ExpiresAt, p.CreatedBy))
	return t, wrap("create api token", err)
}

// GetAPIToken returns one of the team's tokens, revoked or not.
func (s *Store) GetAPIToken(ctx context.Context, teamID, id string) (APIToken, error) {
	t, err := scanAPIToken(s.db.QueryRow(ctx, `
		SELECT `+apiTokenColumns+` FROM api_tokens WHERE team_id = $1 AND id = $2`, teamID, id))
	return t, wrap("get api token", err)
}

// ListAPITokens returns the team's tokens that are not revoked, newest first.
func (s *Store) ListAPITokens(ctx context.Context, teamID string) ([]APIToken, error) {
	rows, err := s.db.Query(ctx, `
		SELECT `+apiTokenColumns+` FROM api_tokens
		WHERE team_id = $1 AND revoked_at IS NULL
		ORDER BY created_at DESC, id`, teamID)
	if err != nil {
		return nil, wrap("list api tokens", err)
	}
	ts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (APIToken, error) { return scanAPIToken(r) })
	return ts, wrap("list api tokens", err)
}

// RevokeAPIToken revokes one of the team's tokens; revoking a revoked token
// is ErrNotFound.
func (s *Store) RevokeAPIToken(ctx context.Context, teamID, id string, now time.Time) error {
	return s.execOne(ctx, "revoke api token", `
		UPDATE api_tokens SET revoked_at = $3
		WHERE team_id = $1 AND id = $2 AND revoked_at IS NULL`, teamID, id, now)
}

// AuthenticateAPIToken finds the live token with that hash (not revoked, not
// expired at now), with its creator's current role in the team, and records
// its use. It is keyed by the secret hash, which is what carries the team;
// an unknown, revoked or expired token is ErrNotFound.
func (s *Store) AuthenticateAPIToken(ctx context.Context, tokenHash []byte, now time.Time) (APIToken, error) {
	const op = "authenticate api token"
	var role *string
	// The role is read in the same query: every API request needs both.
	t, err := scanAPIToken(withTrailing{s.db.QueryRow(ctx, `
		SELECT `+apiTokenColumns+`,
			(SELECT m.role FROM memberships m WHERE m.team_id = api_tokens.team_id AND m.user_id = api_tokens.created_by)
		FROM api_tokens
		WHERE token_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)`,
		tokenHash, now), []any{&role}})
	if err != nil {
		return APIToken{}, wrap(op, err)
	}
	if role != nil {
		t.CreatorRole = Role(*role)
	}
	if err := s.NoteAPITokenUse(ctx, &t, now); err != nil {
		return APIToken{}, wrap(op, err)
	}
	return t, nil
}

// NoteAPITokenUse records that t was used at now, at most once per
// lastUsedGranularity (t.LastUsedAt says when it last was), and updates
// t.LastUsedAt when it writes.
func (s *Store) NoteAPITokenUse(ctx context.Context, t *APIToken, now time.Time) error {
	if t.LastUsedAt != nil && now.Sub(*t.LastUsedAt) < lastUsedGranularity {
		return nil
	}
	if _, err := s.db.Exec(ctx, `
		UPDATE api_tokens SET last_used_at = $3 WHERE team_id = $1 AND id = $2`, t.TeamID, t.ID, now); err != nil {
		return wrap("note api token use", err)
	}
	t.LastUsedAt = &now
	return nil
}
