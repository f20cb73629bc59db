// Package image resolves the image references of image-sourced services to
// the exact image a deployment runs: present locally, or pulled, and pinned
// by image ID and repository digest.
//
// Before asking the daemon to pull, it checks the registry's address
// against the outbound policy (package outbound), and its errors never
// carry the daemon's or the registry's text.
//
// It knows Docker, not Postgres: it must not import store, pipeline,
// jobs or app.
package image
