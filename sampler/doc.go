// Package sampler is the worker's usage sampler. Every 15 s (a slot;
// [worker] usage_sample_seconds shortens it for tests) it records, in
// Postgres:
//
//   - for each service container on its own node (the Engine API's stats
//     are per node), CPU, memory and network, summed per service;
//   - Swarm-wide, each service's running tasks and the tasks that ended
//     on their own (restarts), which also tell whether it is healthy: a
//     service unhealthy for a destination's N minutes, and its recovery,
//     are notifications;
//   - from the gateway's /metrics, each route's requests, 5xx answers and
//     latency histogram.
//
// Every 5 minutes it rolls the slots into 5-minute averages, deletes
// full-resolution samples older than 24 hours and averages older than 30
// days, and warns of certificates that failed or end within 14 days.
//
// Several workers may run it: a worker samples a node's containers while
// it holds that node's scope ("node:<id>"), and the Swarm-wide part while
// it holds "cluster" (store.ClaimMetricSlot), each slot once. Run a worker
// on every node whose containers should be sampled; the tasks of a node
// without one are counted (tasks, restarts) but not measured, and a
// sample says how many tasks it measured.
//
// Series reads what the API and the dashboard show (series.go).
//
// It joins store, runtime/usage and notify; it must not import app, jobs,
// pipeline, views or cmd.
package sampler
