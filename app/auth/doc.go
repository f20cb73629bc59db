// Package auth holds the pure parts of authentication and authorization that
// the dashboard (package app) and the JSON API (package app/api) share:
// argon2id password hashing and password rules, random secrets (session
// cookies, invitations, API tokens; the store hashes them at rest), and the
// role-to-scope model.
//
// It must not import Fiber, the store, or anything else from Slipway: it is
// plain functions over strings so both HTTP front ends and the CLI can use it.
package auth
