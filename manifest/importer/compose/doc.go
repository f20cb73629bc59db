// Package compose translates a Docker Compose file into a native Slipway
// manifest plus diagnostics that name the field of the original file (with
// its line). The file is read by the Compose Specification's own loader
// (github.com/compose-spec/compose-go/v2), never by hand: it resolves the
// short and long syntaxes, and the translation reads its typed model.
// docs/import/compose.md is the mapping table.
//
// It is a pure function of the file's bytes: it never reads other files
// (env_file, include, extends, secret and config files stay unread) nor the
// process environment, and imports manifest/, the importers' internal
// packages and compose-go only, never the CLI, Postgres, Docker or HTTP.
package compose
