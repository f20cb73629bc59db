// Package lines maps the field paths the importers name in diagnostics
// (services.web.http[0].port, applications.web.routes.public.tls) to the
// line of the source file they are written on, for TOML and YAML sources.
//
// Paths are built exactly as convert.Join and convert.Index build them, so a
// diagnostic's path finds its line, or the line of its nearest ancestor.
// It imports the TOML and YAML parsers and convert only; never manifest/, a
// dialect package, the CLI, Postgres, Docker or HTTP.
package lines
