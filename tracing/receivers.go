package tracing

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/slipwayhq/slipway/telemetry"
)

// SocketName is the socket a telemetry receiver listens on, inside the
// directory mounted at /run/slipway/telemetry.
const SocketName = telemetry.SocketName

// receiverExporter sends spans to every telemetry receiver's socket found
// under its root (root/<environment>/otlp.sock) when it exports. A
// receiver that is down loses those spans; the others still get them.
type receiverExporter struct {
	receivers *telemetry.Receivers[sdktrace.SpanExporter]
}

func newReceiverExporter(root string) *receiverExporter {
	return &receiverExporter{telemetry.NewReceivers(root, openExporter, func(ctx context.Context, e sdktrace.SpanExporter) error { return e.Shutdown(ctx) })}
}

func openExporter(ctx context.Context, client *http.Client) (sdktrace.SpanExporter, error) {
	return otlptracehttp.New(ctx, otlptracehttp.WithEndpoint("localhost"), otlptracehttp.WithInsecure(), otlptracehttp.WithHTTPClient(client))
}

func (e *receiverExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	return e.receivers.Each(ctx, func(exp sdktrace.SpanExporter) error { return exp.ExportSpans(ctx, spans) })
}

func (e *receiverExporter) Shutdown(ctx context.Context) error { return e.receivers.Shutdown(ctx) }
