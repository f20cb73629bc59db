// Package tracing exports OpenTelemetry traces of deployments over OTLP/HTTP
// when [telemetry] otlp_endpoint is set: Start installs the global tracer
// provider, Step records one finished deployment step as a span. Without an
// endpoint the global provider stays OpenTelemetry's no-op one, and Step
// costs next to nothing.
//
// Receivers' sockets and the endpoint rule are package telemetry's, shared
// with the daemon's logs and metrics. It must not import the store, pipeline,
// jobs or app packages.
package tracing
