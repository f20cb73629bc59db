// Package importer turns manifests written for other platforms (gordon,
// hakopod, skali, ply, and Docker Compose) into native Slipway manifests.
// Import picks the dialect's translator, sorts its diagnostics and checks
// that the result is a valid native manifest; Detect guesses the dialect for --from auto.
//
// The translations live in one subpackage per dialect and are pure; this
// package and they must not import the CLI, the API, Postgres, Docker or HTTP.
package importer
