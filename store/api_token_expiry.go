package store

import (
	"context"
	"time"
)

// APITokenExpired reports whether the token with that hash exists, is not
// revoked, and had expired at now: authentication then answers
// token_expired rather than the vaguer token_invalid. Like
// AuthenticateAPIToken it is keyed by the secret's hash.
func (s *Store) APITokenExpired(ctx context.Context, tokenHash []byte, now time.Time) (bool, error) {
	var expired bool
	err := s.db.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM api_tokens
		WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at IS NOT NULL AND expires_at <= $2)`,
		tokenHash, now).Scan(&expired)
	return expired, wrap("api token expired", err)
}
