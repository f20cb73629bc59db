// Package deploy benchmarks a deployment through Slipway's pipeline against
// creating the equivalent Swarm service by hand, on the real Swarm: the
// pipeline's own cost is the ratio between the two. `make test` runs one
// short round (TestDeployOverhead); `make bench` runs five
// (BenchmarkDeployOverhead). Figures are printed, never asserted.
package deploy
