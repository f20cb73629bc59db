package authcache

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/changecache"
)

// The cache's buckets; the triggers' notifications (empty payloads) drop
// both.
const (
	sessionBucket = "sessions"
	tokenBucket   = "tokens"
)

// Cache is safe for concurrent use; make one with New.
type Cache struct {
	st   *store.Store
	kept *changecache.Cache
}

// New returns a cache over st that passes every lookup through to st until
// Run is listening.
func New(st *store.Store, log *slog.Logger) *Cache {
	return &Cache{st: st, kept: changecache.New(st, store.AuthChannel, log)}
}

// Run listens for auth changes until ctx ends, reconnecting after a failure
// (the cache is off until the listen is back).
func (c *Cache) Run(ctx context.Context) { c.kept.Run(ctx) }

// Listening reports whether the cache is in use.
func (c *Cache) Listening() bool { return c.kept.Listening() }

// Forget drops every entry. serve calls it after each request that may
// have changed a session, a membership or a token, so that the process
// that made a change never answers from before it, even ahead of the
// notification.
func (c *Cache) Forget() { c.kept.Forget("") }

// SignedIn is store.GetSignedIn for the session whose id (the cookie's
// hash) is id, at now. The teams slice is the caller's own.
func (c *Cache) SignedIn(ctx context.Context, id []byte, now time.Time) (store.SignedIn, error) {
	in, err := changecache.Get(c.kept, sessionBucket, string(id), now,
		func(in store.SignedIn) bool { return in.Session.ExpiresAt.After(now) },
		func() (store.SignedIn, error) { return c.st.GetSignedIn(ctx, id) })
	in.Teams = slices.Clone(in.Teams)
	return in, err
}

// SessionTouched records in the kept entry, if any, that the session id
// was touched (store.TouchSession): seen now, expiring at expires. Without
// it a kept session would look unseen and be touched on every request.
func (c *Cache) SessionTouched(id []byte, seen, expires time.Time) {
	changecache.Update(c.kept, sessionBucket, string(id), func(in *store.SignedIn) {
		in.Session.LastSeenAt, in.Session.ExpiresAt = seen, expires
	})
}

// APIToken is store.AuthenticateAPIToken, last-used stamp included.
func (c *Cache) APIToken(ctx context.Context, hash []byte, now time.Time) (store.APIToken, error) {
	hit := true
	t, err := changecache.Get(c.kept, tokenBucket, string(hash), now,
		func(t store.APIToken) bool { return t.ExpiresAt == nil || t.ExpiresAt.After(now) },
		func() (store.APIToken, error) {
			hit = false
			return c.st.AuthenticateAPIToken(ctx, hash, now)
		})
	if err != nil || !hit {
		return t, err
	}
	before := t.LastUsedAt
	if err := c.st.NoteAPITokenUse(ctx, &t, now); err != nil {
		return store.APIToken{}, err
	}
	if t.LastUsedAt != before {
		changecache.Update(c.kept, tokenBucket, string(hash), func(kept *store.APIToken) { kept.LastUsedAt = t.LastUsedAt })
	}
	return t, nil
}
