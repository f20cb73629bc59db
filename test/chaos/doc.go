// Package chaos holds fault tests that run real processes against real
// Postgres and the real Swarm: workers killed with SIGKILL mid-deployment,
// and the like. `make test` runs them.
package chaos
