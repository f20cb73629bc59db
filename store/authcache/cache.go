package authcache

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/slipwayhq/slipway/store"
)

// MaxAge bounds how long an entry is used, notified or not.
const MaxAge = time.Minute

// maxEntries bounds each map; a full map is emptied rather than evicted
// from entry by entry (it refills with the active sessions).
const maxEntries = 10000

// Cache is safe for concurrent use. The zero value is not usable: use New.
type Cache struct {
	st  *store.Store
	log *slog.Logger

	mu        sync.Mutex
	listening bool
	// generation counts drops: a lookup stores its answer only when no
	// drop happened since it began.
	generation uint64
	sessions   map[string]entry[store.SignedIn]
	tokens     map[string]entry[store.APIToken]
}

type entry[T any] struct {
	value T
	added time.Time
}

// New returns a cache over st that passes every lookup through to st until
// Run is listening.
func New(st *store.Store, log *slog.Logger) *Cache {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Cache{st: st, log: log, sessions: map[string]entry[store.SignedIn]{}, tokens: map[string]entry[store.APIToken]{}}
}

// Run listens for auth changes until ctx ends, reconnecting after a failure
// (the cache is off until the listen is back).
func (c *Cache) Run(ctx context.Context) {
	backoff := time.Second
	for {
		err := c.st.ListenAuthChanges(ctx, func() {
			c.setListening(true)
			backoff = time.Second
		}, func(string) { c.Forget() })
		c.setListening(false)
		if ctx.Err() != nil {
			return
		}
		c.log.Warn("auth cache off: lost the listen for auth changes; retrying", "err", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

func (c *Cache) setListening(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.listening = on
	c.dropLocked()
}

// Listening reports whether the cache is in use.
func (c *Cache) Listening() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.listening
}

// Forget drops every entry. serve calls it after each request that may
// have changed a session, a membership or a token, so that the process
// that made a change never answers from before it, even ahead of the
// notification.
func (c *Cache) Forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked()
}

func (c *Cache) dropLocked() {
	c.generation++
	clear(c.sessions)
	clear(c.tokens)
}

// SignedIn is store.GetSignedIn for the session whose id (the cookie's
// hash) is id. The teams slice is the caller's own.
func (c *Cache) SignedIn(ctx context.Context, id []byte, now time.Time) (store.SignedIn, error) {
	in, err := lookup(c, c.sessions, string(id), now,
		func(in store.SignedIn) bool { return in.Session.ExpiresAt.After(now) },
		func() (store.SignedIn, error) { return c.st.GetSignedIn(ctx, id) })
	in.Teams = slices.Clone(in.Teams)
	return in, err
}

// SessionTouched records in the kept entry, if any, that the session id
// was touched (store.TouchSession): seen now, expiring at expires. Without
// it a kept session would look unseen and be touched on every request.
func (c *Cache) SessionTouched(id []byte, seen, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.sessions[string(id)]; ok {
		e.value.Session.LastSeenAt, e.value.Session.ExpiresAt = seen, expires
		c.sessions[string(id)] = e
	}
}

// APIToken is store.AuthenticateAPIToken, last-used stamp included.
func (c *Cache) APIToken(ctx context.Context, hash []byte, now time.Time) (store.APIToken, error) {
	hit := true
	t, err := lookup(c, c.tokens, string(hash), now,
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
		c.mu.Lock()
		if e, ok := c.tokens[string(hash)]; ok {
			e.value.LastUsedAt = t.LastUsedAt
			c.tokens[string(hash)] = e
		}
		c.mu.Unlock()
	}
	return t, nil
}

// lookup answers key from m when the cache is listening and the entry is
// young and still valid at now, and from fetch otherwise, keeping fetch's
// answer when no drop happened meanwhile. Errors (not found included) are
// never kept.
func lookup[T any](c *Cache, m map[string]entry[T], key string, now time.Time, valid func(T) bool, fetch func() (T, error)) (T, error) {
	c.mu.Lock()
	e, ok := m[key]
	listening, generation := c.listening, c.generation
	c.mu.Unlock()
	if listening && ok && now.Sub(e.added) < MaxAge && valid(e.value) {
		return e.value, nil
	}
	v, err := fetch()
	if err != nil || !listening {
		return v, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.listening && c.generation == generation {
		if len(m) >= maxEntries {
			clear(m)
		}
		m[key] = entry[T]{value: v, added: now}
	}
	return v, nil
}
