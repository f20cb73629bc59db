package tracing

import (
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"sync"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// SocketName is the socket a telemetry receiver listens on, inside the
// directory mounted at /run/slipway/telemetry.
const SocketName = "otlp.sock"

// receiverExporter sends spans to every telemetry receiver's socket found
// under root (root/<environment>/otlp.sock) when it exports: receivers
// come and go with grants, so the sockets are looked up each time. A
// receiver that is down loses those spans; the others still get them.
type receiverExporter struct {
	root   string
	mu     sync.Mutex
	byPath map[string]sdktrace.SpanExporter
}

func newReceiverExporter(root string) *receiverExporter {
	return &receiverExporter{root: root, byPath: map[string]sdktrace.SpanExporter{}}
}

func (e *receiverExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	sockets, err := filepath.Glob(filepath.Join(e.root, "*", SocketName))
	if err != nil {
		return err
	}
	var errs []error
	for _, sock := range sockets {
		exp, err := e.exporter(ctx, sock)
		if err == nil {
			err = exp.ExportSpans(ctx, spans)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// exporter returns the socket's exporter, creating it the first time.
func (e *receiverExporter) exporter(ctx context.Context, sock string) (sdktrace.SpanExporter, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if exp, ok := e.byPath[sock]; ok {
		return exp, nil
	}
	dialer := net.Dialer{}
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, "unix", sock)
		},
	}}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint("localhost"), otlptracehttp.WithInsecure(), otlptracehttp.WithHTTPClient(client))
	if err != nil {
		return nil, err
	}
	e.byPath[sock] = exp
	return exp, nil
}

func (e *receiverExporter) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var errs []error
	for _, exp := range e.byPath {
		errs = append(errs, exp.Shutdown(ctx))
	}
	return errors.Join(errs...)
}
