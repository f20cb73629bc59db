// Package tracing exports OpenTelemetry traces of deployments over OTLP/HTTP
// when [telemetry] otlp_endpoint is set: Start installs the global tracer
// provider, Step records one finished deployment step as a span. Without an
// endpoint the global provider stays OpenTelemetry's no-op one, and Step
// costs next to nothing.
//
// It must not import the store, jobs or app packages.
package tracing
