// Package skali translates a skali.yaml project manifest into a native
// Slipway manifest plus diagnostics that name the field of the original file
// and its line. Managed PostgreSQL databases become a generated postgres
// service. docs/import/skali.md is the mapping table.
//
// It is a pure function of the file's bytes: it imports manifest/, the
// importers' shared convert package and goccy/go-yaml only, never the CLI,
// Postgres, Docker or HTTP.
package skali
