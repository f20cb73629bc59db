// Package hakopod translates a hakopod TOML schema v1 application into a
// native Slipway manifest plus diagnostics that name the field of the original
// file. docs/import/hakopod.md is the mapping table.
//
// It is a pure function of the file's bytes: it imports manifest/ and the
// importers' shared convert package only, never the CLI, Postgres, Docker or
// HTTP.
package hakopod
