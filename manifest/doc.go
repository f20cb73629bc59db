// Package manifest is Slipway's manifest engine: strict decoding of TOML and
// JSON Application manifests, validation that reports every error with its
// field path and code, variable rendering per environment, the canonical spec
// hash, plan diffs and the JSON Schema.
//
// It is pure: it must not import Postgres, Docker, HTTP or any other package of
// this module outside manifest/.
package manifest
