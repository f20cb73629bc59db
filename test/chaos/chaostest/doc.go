// Package chaostest runs Slipway's real processes for the fault and load
// tests: the binary under test (SLIPWAY_BIN), `slipway serve` and `slipway
// worker` against a test database, API tokens for fresh teams, and the
// waits between them. It is test-only: product code must not import it.
package chaostest
