// Package dashboard benchmarks the HTTP front end under concurrent load:
// the applications page, the Overview of an application with 20 services
// and 200 deployments, GET /api/v1/applications and a static asset from
// the same process, printing p50/p99 latency, requests per second, CPU per
// request (this process's, and the whole machine's, Postgres included),
// and the pages' p99 as a multiple of the static asset's (target: under
// 5×). The dashboard runs with its caches listening, as serve does.
//
// Run it with `make bench` or
// `go test -run '^$' -bench Dashboard ./bench/dashboard` (DATABASE_URL set);
// SLIPWAY_BENCH_DURATION (default 20s) sets each phase's length. Numbers
// are printed, never asserted. Test-only: nothing imports it.
package dashboard
