// Package image resolves the image references of image-sourced services to
// the exact image a deployment runs: present locally, or pulled, and pinned
// by image ID and repository digest.
//
// It knows Docker, not Postgres: it must not import store, pipeline,
// jobs or app.
package image
