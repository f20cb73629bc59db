// Package ply translates a ply.toml (an app in the grouped [package]/[build]/
// [run] form or the older flat form, or a [[service]] composition) into a
// native Slipway manifest plus diagnostics that name the field of the original
// file. Registry members map to official images through a small table (see
// registry.go and docs/import/ply.md).
//
// It is a pure function of the file's bytes: it imports manifest/ and the
// importers' shared convert package only, never the CLI, Postgres, Docker or
// HTTP.
package ply
