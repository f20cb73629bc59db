package store

import (
	"context"
	"crypto/subtle"
	"errors"
)

// IssueSetupToken stores the hash of a new installation's setup token
// unless one is stored already (another serve process issued it); it
// reports whether this one was stored. The token itself is never stored.
func (s *Store) IssueSetupToken(ctx context.Context, tokenHash []byte) (bool, error) {
	tag, err := s.db.Exec(ctx, `
		INSERT INTO setup_token (token_hash) VALUES ($1) ON CONFLICT (singleton) DO NOTHING`, tokenHash)
	if err != nil {
		return false, wrap("issue setup token", err)
	}
	return tag.RowsAffected() == 1, nil
}

// SetupTokenMatches compares tokenHash with the stored one in constant
// time; false when none is stored.
func (s *Store) SetupTokenMatches(ctx context.Context, tokenHash []byte) (bool, error) {
	var stored []byte
	err := wrap("get setup token", s.db.QueryRow(ctx, `SELECT token_hash FROM setup_token`).Scan(&stored))
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare(stored, tokenHash) == 1, nil
}

// DeleteSetupToken removes the setup token, once an owner exists.
func (s *Store) DeleteSetupToken(ctx context.Context) error {
	_, err := s.db.Exec(ctx, `DELETE FROM setup_token`)
	return wrap("delete setup token", err)
}
