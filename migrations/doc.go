// Package migrations holds Slipway's Postgres schema as an append-only list
// of numbered SQL files (NNNN_name.sql), embedded into the binary. A file,
// once released, is never edited: a change is a new file. store.Migrate
// applies them; this package holds only the files and must not import
// anything from Slipway.
package migrations

import "embed"

// FS holds every migration file, named NNNN_description.sql.
//
//go:embed *.sql
var FS embed.FS
