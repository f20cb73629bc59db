package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// CertObject is one key of the gateways' shared certificate storage.
type CertObject struct {
	Key        string
	Size       int64
	ModifiedAt time.Time
}

// SealedCertValue is a certificate storage value as stored: sealed with
// the secret key (keyring.Sealed's parts), and its plaintext size.
type SealedCertValue struct {
	KeyID      string
	Nonce      []byte
	Ciphertext []byte
	Size       int64
}

// PutCertObject creates or overwrites key.
func (s *Store) PutCertObject(ctx context.Context, key string, v SealedCertValue) error {
	_, err := s.db.Exec(ctx, `
		INSERT INTO cert_storage (key, key_id, nonce, ciphertext, size) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (key) DO UPDATE SET key_id = excluded.key_id, nonce = excluded.nonce,
			ciphertext = excluded.ciphertext, size = excluded.size, modified_at = now()`,
		key, v.KeyID, v.Nonce, v.Ciphertext, v.Size)
	return wrap("store certificate object", err)
}

// CertObjectValue returns key's sealed value, ErrNotFound when there is no
// such key.
func (s *Store) CertObjectValue(ctx context.Context, key string) (SealedCertValue, error) {
	var v SealedCertValue
	err := s.db.QueryRow(ctx, `SELECT key_id, nonce, ciphertext, size FROM cert_storage WHERE key = $1`, key).
		Scan(&v.KeyID, &v.Nonce, &v.Ciphertext, &v.Size)
	return v, wrap("load certificate object", err)
}

// CertObjectInfo returns key's size and modification time, ErrNotFound
// when there is no such key.
func (s *Store) CertObjectInfo(ctx context.Context, key string) (CertObject, error) {
	o := CertObject{Key: key}
	err := s.db.QueryRow(ctx, `SELECT size, modified_at FROM cert_storage WHERE key = $1`, key).Scan(&o.Size, &o.ModifiedAt)
	return o, wrap("stat certificate object", err)
}

// DeleteCertObjects deletes key and every key under key + "/"; deleting
// nothing is not an error.
func (s *Store) DeleteCertObjects(ctx context.Context, key string) error {
	_, err := s.db.Exec(ctx, `DELETE FROM cert_storage WHERE key = $1 OR starts_with(key, $1 || '/')`, key)
	return wrap("delete certificate objects", err)
}

// CertObjectKeys returns the keys under prefix + "/" (every key for an
// empty prefix), sorted.
func (s *Store) CertObjectKeys(ctx context.Context, prefix string) ([]string, error) {
	rows, err := s.db.Query(ctx, `
		SELECT key FROM cert_storage WHERE $1 = '' OR starts_with(key, $1 || '/') ORDER BY key`, prefix)
	if err != nil {
		return nil, wrap("list certificate objects", err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return keys, wrap("list certificate objects", err)
}

// TryCertLock takes the lock name for token until ttl from now, unless
// another token holds it and it has not expired; it says whether token
// holds it now.
func (s *Store) TryCertLock(ctx context.Context, name, token string, ttl time.Duration) (bool, error) {
	tag, err := s.db.Exec(ctx, `
		INSERT INTO cert_locks (name, token, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))
		ON CONFLICT (name) DO UPDATE SET token = excluded.token, expires_at = excluded.expires_at
		WHERE cert_locks.expires_at < now() OR cert_locks.token = excluded.token`,
		name, token, ttl.Seconds())
	if err != nil {
		return false, wrap("take certificate lock", err)
	}
	return tag.RowsAffected() == 1, nil
}

// ExtendCertLock pushes the expiry of token's lock to ttl from now; it
// says whether token still held it.
func (s *Store) ExtendCertLock(ctx context.Context, name, token string, ttl time.Duration) (bool, error) {
	tag, err := s.db.Exec(ctx, `
		UPDATE cert_locks SET expires_at = now() + make_interval(secs => $3) WHERE name = $1 AND token = $2`,
		name, token, ttl.Seconds())
	if err != nil {
		return false, wrap("extend certificate lock", err)
	}
	return tag.RowsAffected() == 1, nil
}

// ReleaseCertLock frees token's lock; a lock token no longer holds is left
// alone.
func (s *Store) ReleaseCertLock(ctx context.Context, name, token string) error {
	_, err := s.db.Exec(ctx, `DELETE FROM cert_locks WHERE name = $1 AND token = $2`, name, token)
	return wrap("release certificate lock", err)
}
