// Package leftovers checks what a test run left on the Docker engine: the
// services, networks, configs, secrets and volumes labelled
// dev.slipway.managed=true made since the run started. `make test` runs it
// in a step of its own once `go test ./...` has finished (every test
// binary has exited, so none of the run's tests is still making objects),
// with SLIPWAY_LEFTOVERS_SINCE set to the run's start in Unix seconds;
// without it the test skips. Objects made before the run (a developer's
// own `slipway dev`) are not counted.
//
// It reports them in the test summary. Other users of the same engine
// during the run (a second `make test`, a `slipway dev` deploying) would
// be counted too, so it fails only with SLIPWAY_LEFTOVERS=fail, for an
// engine the run has to itself (CI).
//
// It also checks the machine for what the multi-node test clusters
// (test/multinode/harness) left: network namespaces, daemons, cgroups,
// mounts and data directories; it reports them and removes them.
package leftovers
