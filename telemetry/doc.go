// Package telemetry exports the daemon's own logs and metrics over
// OTLP/HTTP, to [telemetry] otlp_endpoint and to every telemetry receiver
// listening in its socket directory (root/<environment>/otlp.sock), the
// same destinations package tracing sends deployment traces to.
//
// StartLogs returns a slog.Handler to tee the process logger into: records
// are batched in a bounded queue (the oldest dropped when it is full) and
// exported in the background, so a slow or dead receiver never blocks
// logging. StartMetrics reads a Prometheus registry (package metrics) every
// interval and exports what it holds, so no metric is defined twice.
//
// Receivers and SignalURL are the socket discovery and endpoint rules all
// three signals share. It must not import other packages of this module.
package telemetry
