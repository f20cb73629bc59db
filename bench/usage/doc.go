// Package usage benchmarks the usage charts (issue 22) against real
// Postgres: N services (default 500, ten per application, one route per
// application) sampled every 15 s for a simulated day, written the way the
// sampler writes a slot, with the sampler's own rollups and pruning run
// every slot. It reports
//
//   - the write cost of one sampling round for all services (mean and
//     p99 ms), and the sampler's per-slot maintenance (claims, rollups,
//     pruning);
//   - the bytes one service-day (and one route-day) takes in Postgres,
//     full resolution and 5-minute averages, measured as
//     pg_total_relation_size deltas (tables, indexes and TOAST), and the
//     steady state they imply (24 h of full resolution plus 30 days of
//     averages);
//   - the p99 of the usage partial (the Overview's charts, as htmx loads
//     it) and of GET …/environments/{env}/metrics, over 1 h and 24 h, for
//     an application of ten services with a full day of data, through the
//     real app handler over HTTP.
//
// Run it with `make bench` or
// `go test -run '^$' -bench Usage ./bench/usage` (DATABASE_URL set).
// SLIPWAY_BENCH_USAGE_SERVICES (default 500), SLIPWAY_BENCH_USAGE_HOURS
// (default 24) and SLIPWAY_BENCH_USAGE_REQUESTS (default 200 per chart
// request) make it smaller. Numbers are printed, never asserted.
// Test-only: nothing imports it.
package usage
