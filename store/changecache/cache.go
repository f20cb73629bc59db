package changecache

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/slipwayhq/slipway/store"
)

// MaxAge bounds how long an answer is used, notified or not.
const MaxAge = time.Minute

// Bounds on what is kept, whatever requests ask for (every search a
// tenant types is a key): a cache that reaches them is emptied rather than
// evicted from key by key (it refills with what is in use).
const (
	maxEntries = 5000
	maxBuckets = 5000
)

// Cache is safe for concurrent use; make one with New.
type Cache struct {
	st      *store.Store
	channel string
	log     *slog.Logger

	mu        sync.Mutex
	listening bool
	// generation counts drops of everything; each bucket counts its own.
	// A lookup keeps its answer only when neither moved since it began.
	generation uint64
	buckets    map[string]*bucket
	entries    int // kept answers, in all buckets
}

type bucket struct {
	generation uint64
	entries    map[string]entry
}

type entry struct {
	value any
	added time.Time
}

// New returns a cache over st for notifications on channel; it passes
// every lookup through until Run is listening.
func New(st *store.Store, channel string, log *slog.Logger) *Cache {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Cache{st: st, channel: channel, log: log, buckets: map[string]*bucket{}}
}

// Run listens until ctx ends, reconnecting after a failure (the cache is
// off until the listen is back).
func (c *Cache) Run(ctx context.Context) {
	backoff := time.Second
	for {
		err := c.st.Listen(ctx, c.channel, func() {
			c.setListening(true)
			backoff = time.Second
		}, c.Forget)
		c.setListening(false)
		if ctx.Err() != nil {
			return
		}
		c.log.Warn("cache off: lost the listen for changes; retrying", "channel", c.channel, "err", err, "retry_in", backoff)
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
	c.dropAllLocked()
}

// Listening reports whether the cache is in use.
func (c *Cache) Listening() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.listening
}

// Forget drops the bucket named name, or every bucket when name is "".
func (c *Cache) Forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if name == "" {
		c.dropAllLocked()
		return
	}
	b, ok := c.buckets[name]
	if !ok {
		// Recorded even when nothing is kept: a lookup of this bucket in
		// flight must not keep what it read before the change.
		if len(c.buckets) >= maxBuckets {
			c.dropAllLocked()
			return
		}
		b = &bucket{entries: map[string]entry{}}
		c.buckets[name] = b
	}
	b.generation++
	c.entries -= len(b.entries)
	clear(b.entries)
}

func (c *Cache) dropAllLocked() {
	c.generation++
	clear(c.buckets)
	c.entries = 0
}

// Get answers key of bucket from memory when the cache is listening and the
// kept answer is younger than MaxAge and valid (nil: always), and from
// fetch otherwise, keeping fetch's answer when nothing was dropped
// meanwhile. Errors are never kept.
func Get[T any](c *Cache, bucketName, key string, now time.Time, valid func(T) bool, fetch func() (T, error)) (T, error) {
	c.mu.Lock()
	listening, generation := c.listening, c.generation
	b := c.buckets[bucketName]
	var bucketGeneration uint64
	var e entry
	var ok bool
	if b != nil {
		bucketGeneration = b.generation
		e, ok = b.entries[key]
	}
	c.mu.Unlock()
	if listening && ok && now.Sub(e.added) < MaxAge {
		if v := e.value.(T); valid == nil || valid(v) {
			return v, nil
		}
	}
	v, err := fetch()
	if err != nil || !listening {
		return v, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.listening || c.generation != generation {
		return v, nil
	}
	if c.entries >= maxEntries {
		c.dropAllLocked()
		return v, nil
	}
	b = c.buckets[bucketName]
	switch {
	case b == nil:
		if len(c.buckets) >= maxBuckets {
			c.dropAllLocked()
			return v, nil
		}
		// A bucket made now has no drops to miss but the cache's own.
		b = &bucket{entries: map[string]entry{}}
		c.buckets[bucketName] = b
	case b.generation != bucketGeneration:
		return v, nil
	}
	if _, replaced := b.entries[key]; !replaced {
		c.entries++
	}
	b.entries[key] = entry{value: v, added: now}
	return v, nil
}

// Update changes the answer kept for key of bucket, if any, with change
// (which gets a copy): for what the caller itself wrote, such as a
// session's last activity.
func Update[T any](c *Cache, bucketName, key string, change func(*T)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.buckets[bucketName]
	if b == nil {
		return
	}
	if e, ok := b.entries[key]; ok {
		v := e.value.(T)
		change(&v)
		e.value = v
		b.entries[key] = e
	}
}
