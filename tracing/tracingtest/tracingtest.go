// Package tracingtest is an in-process OTLP/HTTP receiver for tests: it
// decodes traces, and the logs and metrics package telemetry exports.
package tracingtest

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	collectorlogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	collectormetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Receiver collects the spans, log records and metrics exported to it.
type Receiver struct {
	URL     string
	mu      sync.Mutex
	paths   []string
	spans   []*tracepb.Span
	logs    []*logspb.LogRecord
	metrics []*metricspb.Metric
}

// New starts a receiver, closed when the test ends.
func New(t testing.TB) *Receiver {
	rc := &Receiver{}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	rc.URL = srv.URL
	return rc
}

// NewUnix starts a receiver listening on the unix socket path, as a
// telemetry receiver's collector would; closed when the test ends.
func NewUnix(t testing.TB, path string) *Receiver {
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	rc := &Receiver{URL: "unix://" + path}
	srv := &http.Server{Handler: rc}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return rc
}

// ServeHTTP decodes one OTLP/HTTP protobuf export request: logs on
// /v1/logs, metrics on /v1/metrics, traces on any other path.
func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req, resp proto.Message
	switch r.URL.Path {
	case "/v1/logs":
		req, resp = &collectorlogs.ExportLogsServiceRequest{}, &collectorlogs.ExportLogsServiceResponse{}
	case "/v1/metrics":
		req, resp = &collectormetrics.ExportMetricsServiceRequest{}, &collectormetrics.ExportMetricsServiceResponse{}
	default:
		req, resp = &collectortrace.ExportTraceServiceRequest{}, &collectortrace.ExportTraceServiceResponse{}
	}
	if err := proto.Unmarshal(body, req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	rc.paths = append(rc.paths, r.URL.Path)
	switch req := req.(type) {
	case *collectorlogs.ExportLogsServiceRequest:
		for _, rl := range req.ResourceLogs {
			for _, sl := range rl.ScopeLogs {
				rc.logs = append(rc.logs, sl.LogRecords...)
			}
		}
	case *collectormetrics.ExportMetricsServiceRequest:
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				rc.metrics = append(rc.metrics, sm.Metrics...)
			}
		}
	case *collectortrace.ExportTraceServiceRequest:
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				rc.spans = append(rc.spans, ss.Spans...)
			}
		}
	}
	rc.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(resp)
	_, _ = w.Write(out)
}

// Paths lists the request paths exports arrived on.
func (rc *Receiver) Paths() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.paths...)
}

// Spans returns every span received so far.
func (rc *Receiver) Spans() []*tracepb.Span {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*tracepb.Span(nil), rc.spans...)
}

// Logs returns every log record received so far.
func (rc *Receiver) Logs() []*logspb.LogRecord {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*logspb.LogRecord(nil), rc.logs...)
}

// Metrics returns every metric received so far, one per export it was in.
func (rc *Receiver) Metrics() []*metricspb.Metric {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*metricspb.Metric(nil), rc.metrics...)
}

// Attr returns a span's string attribute.
func Attr(s *tracepb.Span, key string) string { return AttrOf(s.Attributes, key) }

// AttrOf returns the string value of key among attributes, such as a log
// record's or a data point's.
func AttrOf(attributes []*commonpb.KeyValue, key string) string {
	for _, kv := range attributes {
		if kv.Key == key {
			return kv.Value.GetStringValue()
		}
	}
	return ""
}
