package store

import (
	"bytes"
	"context"
	"time"
)

// IdempotencyKey names one idempotent request: the team, the token that
// sent it, the client's key and the method and path it was sent to.
type IdempotencyKey struct {
	TeamID    string
	Principal string
	Key       string
	Method    string
	Path      string
}

// IdempotencyRecord is the stored state of a key.
type IdempotencyRecord struct {
	RequestHash []byte
	// Status is 0 while the first request is still running.
	Status      int
	ContentType string
	Body        []byte
	ExpiresAt   time.Time
}

// ClaimOutcome is what ClaimIdempotencyKey found.
type ClaimOutcome int

const (
	// ClaimAcquired: the caller runs the request and must Complete or
	// Release the key.
	ClaimAcquired ClaimOutcome = iota
	// ClaimReplay: the key holds a finished response for the same request.
	ClaimReplay
	// ClaimInProgress: the same request is running elsewhere right now.
	ClaimInProgress
	// ClaimMismatch: the key was used for a different request.
	ClaimMismatch
)

// ClaimIdempotencyKey claims k for a request whose fingerprint is hash, or
// reports what the key already holds. An expired key, or a claim abandoned
// past its claimedUntil, is taken over. The insert-or-take-over is one
// statement, so two concurrent claims cannot both acquire.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, k IdempotencyKey, hash []byte, now time.Time, claimFor, keepFor time.Duration) (ClaimOutcome, IdempotencyRecord, error) {
	const op = "claim idempotency key"
	tag, err := s.db.Exec(ctx, `
		INSERT INTO idempotency_keys (team_id, principal, key, method, path, request_hash, claimed_until, expires_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (team_id, principal, key, method, path) DO UPDATE SET
			request_hash = EXCLUDED.request_hash, status = NULL, content_type = '', body = NULL,
			claimed_until = EXCLUDED.claimed_until, expires_at = EXCLUDED.expires_at, created_at = EXCLUDED.created_at
		WHERE idempotency_keys.expires_at <= $9
			OR (idempotency_keys.status IS NULL AND idempotency_keys.claimed_until <= $9)`,
		k.TeamID, k.Principal, k.Key, k.Method, k.Path, hash, now.Add(claimFor), now.Add(keepFor), now)
	if err != nil {
		return 0, IdempotencyRecord{}, wrap(op, err)
	}
	if tag.RowsAffected() == 1 {
		return ClaimAcquired, IdempotencyRecord{}, nil
	}
	var rec IdempotencyRecord
	var status *int
	err = s.db.QueryRow(ctx, `
		SELECT request_hash, status, content_type, coalesce(body, ''::bytea), expires_at FROM idempotency_keys
		WHERE team_id = $1 AND principal = $2 AND key = $3 AND method = $4 AND path = $5`,
		k.TeamID, k.Principal, k.Key, k.Method, k.Path).Scan(&rec.RequestHash, &status, &rec.ContentType, &rec.Body, &rec.ExpiresAt)
	if err != nil {
		return 0, IdempotencyRecord{}, wrap(op, err)
	}
	if status != nil {
		rec.Status = *status
	}
	switch {
	case !bytes.Equal(rec.RequestHash, hash):
		return ClaimMismatch, rec, nil
	case status == nil:
		return ClaimInProgress, rec, nil
	}
	return ClaimReplay, rec, nil
}

// CompleteIdempotencyKey stores the response of the request that claimed k.
func (s *Store) CompleteIdempotencyKey(ctx context.Context, k IdempotencyKey, status int, contentType string, body []byte) error {
	return s.execOne(ctx, "complete idempotency key", `
		UPDATE idempotency_keys SET status = $6, content_type = $7, body = $8
		WHERE team_id = $1 AND principal = $2 AND key = $3 AND method = $4 AND path = $5 AND status IS NULL`,
		k.TeamID, k.Principal, k.Key, k.Method, k.Path, status, contentType, body)
}

// ReleaseIdempotencyKey forgets an unfinished claim (the request failed in
// a way worth retrying), so the key can be used again at once.
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, k IdempotencyKey) error {
	_, err := s.db.Exec(ctx, `
		DELETE FROM idempotency_keys
		WHERE team_id = $1 AND principal = $2 AND key = $3 AND method = $4 AND path = $5 AND status IS NULL`,
		k.TeamID, k.Principal, k.Key, k.Method, k.Path)
	return wrap("release idempotency key", err)
}

// DeleteExpiredIdempotencyKeys removes keys past their 24 hours; it
// returns how many went.
func (s *Store) DeleteExpiredIdempotencyKeys(ctx context.Context, now time.Time) (int64, error) {
	tag, err := s.db.Exec(ctx, `DELETE FROM idempotency_keys WHERE expires_at <= $1`, now)
	if err != nil {
		return 0, wrap("delete expired idempotency keys", err)
	}
	return tag.RowsAffected(), nil
}
