// Package security holds the end-to-end proofs of Slipway's security
// claims (issue 11): hostile strings at every place one enters are rejected
// with a field error or carried as inert data, secret values never
// appear in API responses, table rows, events, logs or Docker service
// specs, a GitHub delivery never acts on another team's application, and
// (issue 19) a fresh installation's first run needs its setup token. docs/security.md maps each defence to the test here that proves it.
//
// It only has tests. It drives the product through its exported entry
// points (manifest, runtime/build, app, pipeline, jobs, secrets,
// keyring) and must
// not be imported by anything.
package security
