// Package chaos holds fault tests that run real processes (`slipway serve`
// and `slipway worker` from the binary under test) against real Postgres
// and the real Swarm: the worker killed with SIGKILL mid-rollout, serve
// killed during manifest saves, a private Postgres cluster restarted
// mid-deployment, the control plane down for a minute behind a serving
// gateway, and the GitHub API answering 503. Each survived scenario counts
// into `make test`'s `faults: K scenarios survived` line. The dockerd
// restart lives in test/chaos/dockerd, which `make test` runs alone, last.
package chaos
