// Package dockerd restarts the Docker daemon under a running Slipway and
// checks that the services come back and drift repair restores them. A
// restart disrupts everything else using Docker on the machine, so the
// test runs only with SLIPWAY_CHAOS_DOCKERD=1, which `make test` sets in a
// step of its own after every other test has finished.
package dockerd
