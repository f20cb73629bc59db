package telemetry

import (
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
)

// Config says where logs and metrics go.
type Config struct {
	// Endpoint is [telemetry] otlp_endpoint (see SignalURL); empty exports
	// to no collector.
	Endpoint string
	// ReceiverRoot holds telemetry receivers' socket directories; every
	// receiver listening there gets the logs and metrics too. Empty sends
	// to none.
	ReceiverRoot string
	// ServiceName is the resource's service.name (slipway-serve, ...).
	ServiceName string
	// MetricsInterval is how often metrics are exported; 0 means
	// DefaultMetricsInterval.
	MetricsInterval time.Duration
}

// DefaultMetricsInterval is how often metrics are exported by default.
const DefaultMetricsInterval = 30 * time.Second

// receiverTimeout bounds one export to one receiver socket, so a receiver
// that accepts and never answers delays the others by at most this.
const receiverTimeout = 5 * time.Second

// enabled says whether c names any destination.
func (c Config) enabled() bool { return c.Endpoint != "" || c.ReceiverRoot != "" }

func (c Config) resource() *resource.Resource {
	return resource.NewSchemaless(attribute.String("service.name", c.ServiceName))
}
