// Package backup benchmarks a volume's backup and restore through
// Slipway's backup controller on the real Swarm (the archiver container,
// its socket and the directory target) against archive/tar of the same
// directory. Only `make bench` runs it (BenchmarkBackupRestore); the
// volume is 1 GiB unless SLIPWAY_BENCH_BACKUP_BYTES says otherwise.
// Figures are printed, never asserted.
//
// It is a test-only package: it imports Slipway's test helpers and must
// not be imported.
package backup
