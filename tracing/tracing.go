package tracing

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/slipwayhq/slipway/telemetry"
)

// instrumentation names the tracer of deployment spans.
const instrumentation = "github.com/slipwayhq/slipway/jobs"

// Config says where traces go.
type Config struct {
	// Endpoint is an OTLP/HTTP base URL such as http://collector:4318,
	// which gets /v1/traces (see telemetry.SignalURL). Empty exports to no
	// collector.
	Endpoint string
	// ReceiverRoot holds telemetry receivers' socket directories
	// (ReceiverRoot/<environment>/otlp.sock); every receiver listening
	// there gets the traces too. Empty sends to none.
	ReceiverRoot string
	// ServiceName is the resource's service.name.
	ServiceName string
}

// Start installs a tracer provider exporting as c says and returns the
// function that flushes and stops it. With neither an endpoint nor a
// receiver root it installs nothing and returns a no-op shutdown.
func Start(ctx context.Context, c Config) (shutdown func(context.Context) error, err error) {
	if c.Endpoint == "" && c.ReceiverRoot == "" {
		return func(context.Context) error { return nil }, nil
	}
	opts := []sdktrace.TracerProviderOption{
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", c.ServiceName))),
	}
	if c.Endpoint != "" {
		u, err := telemetry.SignalURL(c.Endpoint, telemetry.Traces)
		if err != nil {
			return nil, err
		}
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(u))
		if err != nil {
			return nil, fmt.Errorf("telemetry: OTLP exporter: %w", err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	if c.ReceiverRoot != "" {
		opts = append(opts, sdktrace.WithBatcher(newReceiverExporter(c.ReceiverRoot)))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	otel.SetTracerProvider(tp)
	return tp.Shutdown, nil
}

// StartDeployment opens the span of one pass of a deployment's worker
// over its steps; the steps Step records in the returned context are its
// children.
func StartDeployment(ctx context.Context, deploymentID, environmentID, applicationID string) (context.Context, trace.Span) {
	return otel.Tracer(instrumentation).Start(ctx, "deployment",
		trace.WithAttributes(
			attribute.String("slipway.deployment.id", deploymentID),
			attribute.String("slipway.environment.id", environmentID),
			attribute.String("slipway.application.id", applicationID),
		))
}

// EndDeployment closes the span, marking it failed when err is not nil.
func EndDeployment(span trace.Span, err error) {
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// Step records one finished deployment step (capture, prepare, job:NAME,
// rollout:SERVICE, ...) as a span from started to ended; a failed state
// marks the span an error with the step's message.
func Step(ctx context.Context, name, state, message string, started, ended time.Time) {
	_, span := otel.Tracer(instrumentation).Start(ctx, "deploy."+name,
		trace.WithTimestamp(started),
		trace.WithAttributes(
			attribute.String("slipway.step", name),
			attribute.String("slipway.step.state", state),
		))
	if state == "failed" {
		span.SetStatus(codes.Error, message)
	}
	span.End(trace.WithTimestamp(ended))
}
