// Command gateway benchmarks the Slipway gateway against nginx, both as
// reverse proxies in front of one backend, and prints for each protocol
// the rate, p99 latency, each proxy's CPU time per request (user and
// system, from /proc) and the ratios gateway/nginx beside the goals of
// issue 18:
//
//   - plain HTTP/1.1 with keep-alive (wrk; the backend alone too):
//     req/s at least 0.9x nginx;
//   - HTTPS, TLS 1.3, HTTP/1.1 with keep-alive (wrk): req/s at least 0.8x,
//     p99 at most 1.5x;
//   - HTTPS, TLS 1.3, HTTP/2 (a Go client, as wrk speaks no HTTP/2): the
//     same goals;
//   - new TLS 1.3 connections, a full handshake each (a Go client):
//     handshakes/s at least 0.5x.
//
// Both proxies serve one ECDSA P-256 certificate. Numbers are printed,
// never asserted. On a shared machine, judge by the CPU time per request:
// rates and p99 follow the other processes' load. The time per target is
// split into interleaved rounds, so load from other processes hits every
// target alike; the per-round ratios are printed as a range.
//
//	go run ./bench/gateway                        # 64 connections, 20 s per target and protocol in 4 rounds
//	go run ./bench/gateway -short                 # ~3 s per target and protocol
//	go run ./bench/gateway -gateway-gomaxprocs 1  # the gateway on one P
//
// SLIPWAY_BENCH_CPUPROFILE=FILE writes the gateway process's CPU profile
// (go tool pprof); with -modes, of one protocol's load only.
//
// The backend and the gateway run as separate processes (this binary
// re-executed with SLIPWAY_BENCH_ROLE), so none of them shares a Go
// runtime with another or with the Go load clients. It runs wrk and nginx
// as external programs, which only benchmarks may do; it imports
// runtime/ingress, test/proxyrig and nothing of the control plane.
package main
