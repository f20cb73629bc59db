package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
)

// instrumentation names the scope of the daemon's log records.
const instrumentation = "github.com/slipwayhq/slipway"

// maxQueuedLogs bounds the records waiting for export per destination;
// past it the oldest are dropped rather than logging waiting.
const maxQueuedLogs = 2048

// StartLogs returns a handler exporting every record it handles as an
// OTLP log record, with its attributes, to the destinations c names, and
// the function that flushes and stops the export. Tee the process's
// handler into it (slog.NewMultiHandler): Handle only queues the record.
// With no destination the handler is nil.
func StartLogs(ctx context.Context, c Config) (slog.Handler, func(context.Context) error, error) {
	if !c.enabled() {
		return nil, func(context.Context) error { return nil }, nil
	}
	opts := []sdklog.LoggerProviderOption{sdklog.WithResource(c.resource())}
	if c.Endpoint != "" {
		u, err := SignalURL(c.Endpoint, Logs)
		if err != nil {
			return nil, nil, err
		}
		exp, err := otlploghttp.New(ctx, otlploghttp.WithEndpointURL(u))
		if err != nil {
			return nil, nil, fmt.Errorf("telemetry: OTLP log exporter: %w", err)
		}
		opts = append(opts, sdklog.WithProcessor(sdklog.NewBatchProcessor(exp, sdklog.WithMaxQueueSize(maxQueuedLogs))))
	}
	if c.ReceiverRoot != "" {
		exp := &receiverLogExporter{NewReceivers(c.ReceiverRoot, openLogExporter, func(ctx context.Context, e *otlploghttp.Exporter) error { return e.Shutdown(ctx) })}
		opts = append(opts, sdklog.WithProcessor(sdklog.NewBatchProcessor(exp, sdklog.WithMaxQueueSize(maxQueuedLogs))))
	}
	lp := sdklog.NewLoggerProvider(opts...)
	return otelslog.NewHandler(instrumentation, otelslog.WithLoggerProvider(lp)), lp.Shutdown, nil
}

// openLogExporter sends to one receiver socket, without retries: a
// receiver that is down loses those records.
func openLogExporter(ctx context.Context, client *http.Client) (*otlploghttp.Exporter, error) {
	return otlploghttp.New(ctx, otlploghttp.WithEndpoint("localhost"), otlploghttp.WithInsecure(), otlploghttp.WithHTTPClient(client),
		otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: false}), otlploghttp.WithTimeout(receiverTimeout))
}

// receiverLogExporter sends each batch to every receiver listening.
type receiverLogExporter struct {
	receivers *Receivers[*otlploghttp.Exporter]
}

func (e *receiverLogExporter) Export(ctx context.Context, records []sdklog.Record) error {
	return e.receivers.Each(ctx, func(exp *otlploghttp.Exporter) error { return exp.Export(ctx, records) })
}

func (e *receiverLogExporter) ForceFlush(context.Context) error { return nil }

func (e *receiverLogExporter) Shutdown(ctx context.Context) error { return e.receivers.Shutdown(ctx) }
