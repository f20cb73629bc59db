// Package backupstore keeps backup archives: Directory, a directory on the
// manager (the embedded default), and S3, a bucket of any S3-compatible
// store reached with minio-go. Put computes the archive's size and SHA-256
// while it streams, so no archive is ever held in memory.
//
// It knows neither Postgres nor Docker: it must not import store, runtime,
// pipeline, jobs or app.
package backupstore
