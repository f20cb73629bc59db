// Package authcache remembers, in one serve process, what a session cookie
// or an API token resolved to, so that a page or an API call does not read
// the session or token from Postgres on every request.
//
// It is a store/changecache listening on store.AuthChannel, where Postgres
// triggers notify every change to sessions, users, memberships, teams and
// API tokens that could change an answer (migration 0027); each
// notification, and Forget, drops everything. An entry also ends at its
// session's or token's expiry.
//
// It must not import app, views or Fiber: app and app/api both use it.
package authcache
