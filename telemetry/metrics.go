package telemetry

import (
	"context"
	"fmt"
	"net/http"

	promclient "github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/contrib/bridges/prometheus"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// StartMetrics exports what gatherer holds (package metrics' registry)
// every c.MetricsInterval to the destinations c names, and returns the
// function that exports a last time and stops. Counters and histograms
// keep their Prometheus names and labels, as cumulative sums and
// histograms. With no destination it does nothing.
func StartMetrics(ctx context.Context, c Config, gatherer promclient.Gatherer) (func(context.Context) error, error) {
	if !c.enabled() || gatherer == nil {
		return func(context.Context) error { return nil }, nil
	}
	interval := c.MetricsInterval
	if interval <= 0 {
		interval = DefaultMetricsInterval
	}
	producer := prometheus.NewMetricProducer(prometheus.WithGatherer(gatherer))
	opts := []sdkmetric.Option{sdkmetric.WithResource(c.resource())}
	reader := func(exp sdkmetric.Exporter) sdkmetric.Option {
		return sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(interval), sdkmetric.WithProducer(producer)))
	}
	if c.Endpoint != "" {
		u, err := SignalURL(c.Endpoint, Metrics)
		if err != nil {
			return nil, err
		}
		exp, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(u))
		if err != nil {
			return nil, fmt.Errorf("telemetry: OTLP metric exporter: %w", err)
		}
		opts = append(opts, reader(exp))
	}
	if c.ReceiverRoot != "" {
		opts = append(opts, reader(&receiverMetricExporter{NewReceivers(c.ReceiverRoot, openMetricExporter, func(ctx context.Context, e *otlpmetrichttp.Exporter) error { return e.Shutdown(ctx) })}))
	}
	return sdkmetric.NewMeterProvider(opts...).Shutdown, nil
}

// openMetricExporter sends to one receiver socket, without retries: the
// next export carries the cumulative values again.
func openMetricExporter(ctx context.Context, client *http.Client) (*otlpmetrichttp.Exporter, error) {
	return otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpoint("localhost"), otlpmetrichttp.WithInsecure(), otlpmetrichttp.WithHTTPClient(client),
		otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false}), otlpmetrichttp.WithTimeout(receiverTimeout))
}

// receiverMetricExporter sends each collection to every receiver
// listening.
type receiverMetricExporter struct {
	receivers *Receivers[*otlpmetrichttp.Exporter]
}

func (e *receiverMetricExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return sdkmetric.DefaultTemporalitySelector(k)
}

func (e *receiverMetricExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}

func (e *receiverMetricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	return e.receivers.Each(ctx, func(exp *otlpmetrichttp.Exporter) error { return exp.Export(ctx, rm) })
}

func (e *receiverMetricExporter) ForceFlush(context.Context) error { return nil }

func (e *receiverMetricExporter) Shutdown(ctx context.Context) error {
	return e.receivers.Shutdown(ctx)
}
