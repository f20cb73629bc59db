package changecache

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

const testChannel = "slipway_changecache_test"

// answer looks key of bucket up with a fetch that answers fresh.
func answer(t *testing.T, c *Cache, bucket, key, fresh string) string {
	t.Helper()
	v, err := Get(c, bucket, key, time.Now(), nil, func() (string, error) { return fresh, nil })
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func notify(t *testing.T, st *store.Store, payload string) {
	t.Helper()
	if _, err := st.Pool().Exec(context.Background(), `SELECT pg_notify($1, $2)`, testChannel, payload); err != nil {
		t.Fatal(err)
	}
}

func TestCache_NotListeningPassesThrough(t *testing.T) {
	c := New(storetest.NewSchema(t), testChannel, nil)
	answer(t, c, "b", "k", "one")
	if got := answer(t, c, "b", "k", "two"); got != "two" {
		t.Errorf("a cache that is not listening answered %q from memory", got)
	}
}

func TestCache_NotificationDropsItsBucket(t *testing.T) {
	st := storetest.NewSchema(t)
	c := New(st, testChannel, nil)
	storetest.RunListening(t, c.Run, c.Listening)
	answer(t, c, "team_a", "k", "a1")
	answer(t, c, "team_b", "k", "b1")
	if got := answer(t, c, "team_a", "k", "a2"); got != "a1" {
		t.Fatalf("a listening cache fetched again (%q)", got)
	}
	notify(t, st, "team_a")
	storetest.WaitFor(t, "team_a's bucket to be dropped", func() bool { return answer(t, c, "team_a", "k", "a2") == "a2" })
	if got := answer(t, c, "team_b", "k", "b2"); got != "b1" {
		t.Errorf("a notification for team_a dropped team_b's answer (%q)", got)
	}
	notify(t, st, "")
	storetest.WaitFor(t, "an empty payload to drop every bucket", func() bool { return answer(t, c, "team_b", "k", "b3") == "b3" })
}

func TestCache_LostListenDropsAndReconnects(t *testing.T) {
	st := storetest.NewSchema(t)
	c := New(st, testChannel, nil)
	storetest.RunListening(t, c.Run, c.Listening)
	answer(t, c, "b", "k", "one")
	c.mu.Lock()
	before := c.generation
	c.mu.Unlock()
	if _, err := st.Pool().Exec(context.Background(), `
		SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN %`+testChannel+`%'`); err != nil {
		t.Fatal(err)
	}
	storetest.WaitFor(t, "the lost listen to drop the cache", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.generation != before
	})
	// Nothing is kept while nobody listens, and what was kept went with
	// the connection.
	storetest.WaitFor(t, "the listen to come back", c.Listening)
	if got := answer(t, c, "b", "k", "two"); got != "two" {
		t.Errorf("after a lost listen the cache answered %q", got)
	}
}

// TestCache_LookupThatSpansADropKeepsNothing: a notification that arrives
// while a lookup reads Postgres (for everything, for the lookup's bucket,
// or for a bucket nothing was kept in yet) keeps the lookup's answer out.
func TestCache_LookupThatSpansADropKeepsNothing(t *testing.T) {
	for name, drop := range map[string]func(c *Cache){
		"everything":      func(c *Cache) { c.Forget("") },
		"its bucket":      func(c *Cache) { c.Forget("b") },
		"a bucket unseen": func(c *Cache) { c.Forget("fresh") },
	} {
		t.Run(name, func(t *testing.T) {
			c := New(nil, testChannel, nil)
			c.listening = true
			bucket := "b"
			if name == "a bucket unseen" {
				bucket = "fresh"
			} else {
				if _, err := Get(c, "b", "other", time.Now(), nil, func() (string, error) { return "x", nil }); err != nil {
					t.Fatal(err)
				}
			}
			v, err := Get(c, bucket, "k", time.Now(), nil, func() (string, error) {
				drop(c) // the notification arrives during the read
				return "stale", nil
			})
			if v != "stale" || err != nil {
				t.Fatalf("Get = %q, %v", v, err)
			}
			if b := c.buckets[bucket]; b != nil && len(b.entries) != 0 {
				t.Errorf("an answer read before a drop was kept: %v", b.entries)
			}
		})
	}
}

func TestCache_ExpiredOrOldEntriesAreNotUsed(t *testing.T) {
	c := New(nil, testChannel, nil)
	c.listening = true
	now := time.Now()
	valid := func(expires time.Time) bool { return expires.After(now) }
	fetched := 0
	fetch := func() (time.Time, error) { fetched++; return time.Time{}, store.ErrNotFound }
	c.buckets["b"] = &bucket{entries: map[string]entry{
		"expired": {value: now.Add(-time.Second), added: now},
		"old":     {value: now.Add(time.Hour), added: now.Add(-MaxAge)},
		"fresh":   {value: now.Add(time.Hour), added: now},
	}}
	for _, key := range []string{"expired", "old"} {
		if _, err := Get(c, "b", key, now, valid, fetch); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s entry: %v, want Postgres's answer", key, err)
		}
	}
	if _, err := Get(c, "b", "fresh", now, valid, fetch); err != nil || fetched != 2 {
		t.Errorf("fresh entry: %v after %d reads", err, fetched)
	}
}

func TestCache_Update(t *testing.T) {
	c := New(nil, testChannel, nil)
	c.listening = true
	if _, err := Get(c, "b", "k", time.Now(), nil, func() (int, error) { return 1, nil }); err != nil {
		t.Fatal(err)
	}
	Update(c, "b", "k", func(v *int) { *v = 2 })
	Update(c, "b", "missing", func(v *int) { t.Error("changed an answer that is not kept") })
	if v, _ := Get(c, "b", "k", time.Now(), nil, func() (int, error) { return 3, nil }); v != 2 {
		t.Errorf("kept answer %d after Update, want 2", v)
	}
}

// TestCache_Bounded: however many keys requests make up, the cache keeps
// at most maxEntries answers.
func TestCache_Bounded(t *testing.T) {
	c := New(nil, testChannel, nil)
	c.listening = true
	for i := range 3 * maxEntries {
		bucket := fmt.Sprint("team-", i%7)
		if _, err := Get(c, bucket, fmt.Sprint("search-", i), time.Now(), nil, func() (int, error) { return i, nil }); err != nil {
			t.Fatal(err)
		}
		kept := 0
		for _, b := range c.buckets {
			kept += len(b.entries)
		}
		if kept != c.entries || kept > maxEntries {
			t.Fatalf("after %d lookups: %d kept, counted %d (at most %d)", i+1, kept, c.entries, maxEntries)
		}
	}
	c.Forget("team-3")
	kept := 0
	for _, b := range c.buckets {
		kept += len(b.entries)
	}
	if kept != c.entries {
		t.Fatalf("after a drop: %d kept, counted %d", kept, c.entries)
	}
}
