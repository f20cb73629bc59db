// Package changecache keeps answers read from Postgres in one serve
// process between notifications that they may have changed.
//
// A Cache listens on one notification channel (store.Listen) and keeps its
// answers in buckets, each bucket a set of keys. A notification whose
// payload names a bucket drops that bucket; an empty payload drops them
// all. The cache is only trusted while it listens: before the listen is in
// place, and whenever the connection is lost, every lookup reads Postgres
// and nothing is kept. A lookup that began before a drop never keeps its
// (possibly stale) answer after it. An answer also ends after MaxAge
// whatever happens, or earlier when the caller's valid check says so. A
// cache keeps at most 5000 answers: reaching that empties it.
//
// Kept answers are shared by every caller: they must be read, never
// changed.
//
// store/authcache builds on it for sessions and API tokens, and the
// dashboard for what its busiest pages read of a team.
//
// It must not import app, views or Fiber.
package changecache
