// Package tracingtest is an in-process OTLP/HTTP trace receiver for tests.
package tracingtest

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Receiver collects the spans exported to it.
type Receiver struct {
	URL   string
	mu    sync.Mutex
	paths []string
	spans []*tracepb.Span
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

// ServeHTTP decodes one OTLP/HTTP protobuf export request.
func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	rc.paths = append(rc.paths, r.URL.Path)
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			rc.spans = append(rc.spans, ss.Spans...)
		}
	}
	rc.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
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

// Attr returns a span's string attribute.
func Attr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.GetStringValue()
		}
	}
	return ""
}
