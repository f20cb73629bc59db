// Command gateway benchmarks the Slipway gateway against nginx as a plain
// reverse proxy and against the backend alone, with wrk, and prints req/s,
// p99 latency, each proxy's CPU time per request (user and system, from
// /proc), and the ratios gateway/nginx and gateway/direct. Numbers are
// printed, never asserted. On a shared machine, judge by the CPU time per
// request: req/s and p99 follow the other processes' load.
// The time per target is split into interleaved rounds, so load from other
// processes on a shared machine hits all three targets alike; the per-round
// ratios are printed as a range.
//
//	go run ./bench/gateway                        # 64 connections, 20 s per target in 4 rounds
//	go run ./bench/gateway -short                 # ~3 s per target
//	go run ./bench/gateway -gateway-gomaxprocs 1  # the gateway on one P
//
// The backend and the gateway run as separate processes (this binary
// re-executed with SLIPWAY_BENCH_ROLE), so none of the three shares a Go
// runtime with another. It runs wrk and nginx as external programs, which
// only benchmarks may do; it imports runtime/ingress and nothing of the
// control plane.
package main
