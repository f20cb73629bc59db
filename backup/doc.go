// Package backup dumps and restores Slipway's Postgres state with pg_dump
// and pg_restore (custom format), run as argument vectors without a shell.
// The secret key that seals stored secrets is not in the database and so
// never in a dump: operators back it up separately.
//
// It imports only the standard library; the CLI (cmd/slipway) calls it.
package backup
