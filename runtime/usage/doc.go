// Package usage reads what Slipway's services use and serve, for the
// worker's sampler (package sampler):
//
//   - stats.go: the CPU time, memory and network bytes of each running
//     service container on the engine's own node (the Engine API's
//     container stats are per node), and Rates, which turns two readings
//     of a container into cores and bytes per second.
//   - cluster.go: each service's desired, running and exited tasks,
//     Swarm-wide, from a manager.
//   - gateway.go: each route's requests, 5xx answers and latency
//     histogram from the gateway's /metrics (Prometheus text), and the
//     differences between two scrapes.
//
// It knows Docker and HTTP, not Postgres: it must not import store,
// jobs, app, pipeline or views.
package usage
