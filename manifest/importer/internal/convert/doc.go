// Package convert holds what the four dialect importers share: the
// Diagnostic type, a walker over decoded source documents that records every
// field it reads (so an unread field becomes an "unknown field" error instead of
// being dropped silently), unit parsers, name normalization, the generated
// PostgreSQL service used for managed databases, and Finalize, which settles
// what only shows once every part is translated (colliding targets, cycles,
// duplicate hostnames, budgets) so the result stays valid.
//
// It is pure: it imports only manifest/ and the standard library, never a
// dialect package, the CLI, Postgres, Docker or HTTP.
package convert
