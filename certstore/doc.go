// Package certstore is certmagic's Storage (with its Locker) on Postgres:
// the certificates, ACME account and challenge tokens every gateway
// shares, in the store's cert_storage table, sealed with the secret key
// (keyring) like secrets since they hold private keys, and certmagic's named locks
// as rows of cert_locks that expire unless their holder keeps extending
// them, so one certificate per hostname is obtained once by whichever
// gateway asks first and a holder that died frees its lock within
// LockTTL. serve hands it to the gateways over the route feed
// (gatewayfeed, ingress.StorageHandler); the gateways never reach Postgres.
//
// It adapts the store; it must not import app, pipeline, jobs, views, cmd
// or runtime (the gateways reach it only through serve).
package certstore
