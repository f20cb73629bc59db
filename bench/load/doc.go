// Package load drives real `slipway serve` and `slipway worker` processes,
// on real Postgres and the real Swarm, with many concurrent deployments
// and a steady stream of GitHub webhook deliveries, and checks that every
// one completes exactly once. `make test` runs the short forms
// (TestLoadDeployments: 10 applications by 5 teams; TestLoadWebhooks:
// 200 deliveries a second for 5 s); `make bench` runs the full ones (50
// applications by 10 teams; 30 s of deliveries) and prints throughput and
// p99 latencies. Figures are printed, never asserted.
package load
