// Package storetest gives tests a real, migrated Postgres database.
//
// It reads DATABASE_URL (make test sets it from scripts/test-postgres.sh)
// and fails the test, never skips it, when that is unset: a suite that
// silently passes without a database proves nothing. The role in
// DATABASE_URL must be allowed to create databases.
//
// Once per test binary it builds a template database holding every
// migration (named by a hash of the migrations, so a schema change builds a
// new one), then clones it with CREATE DATABASE ... TEMPLATE, which is far
// faster than migrating.
//
//   - New: a Store bound to a transaction rolled back on cleanup, on one
//     database shared by the binary's tests. Use it for most tests. Each
//     statement runs in a savepoint, so an expected error (a conflict)
//     leaves the transaction usable. It is one connection: use it from one
//     goroutine at a time (an HTTP test firing concurrent requests, or
//     anything needing Store.Pool(), which is nil here, wants NewSchema).
//   - NewSchema: a Store over a pool to a fresh database of its own, dropped
//     on cleanup, for tests that commit or run River clients.
//   - NewDatabaseURL / EmptyDatabaseURL: the URL of a fresh migrated or
//     empty database, for tests that start processes or test migrations.
//   - NewTenant: a team, an application and its production environment
//     in a store, for tests that store routes or deployments.
//
// It is test-only: product code must not import it.
package storetest
