package telemetry

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"syscall"
)

// SocketName is the socket a telemetry receiver listens on, inside the
// directory mounted at /run/slipway/telemetry.
const SocketName = "otlp.sock"

// Receivers holds one exporter E per telemetry receiver socket found under
// a root directory (root/<environment>/otlp.sock). Receivers come and go
// with grants, so the sockets are looked up on every export; an exporter
// is opened the first time its socket is seen.
type Receivers[E any] struct {
	root   string
	open   func(ctx context.Context, client *http.Client) (E, error)
	close  func(ctx context.Context, exp E) error
	mu     sync.Mutex
	byPath map[string]E
}

// NewReceivers looks for sockets under root. open creates a signal's
// exporter sending through client, whose connections go to the socket
// whatever the URL's host; close shuts one down.
func NewReceivers[E any](root string, open func(ctx context.Context, client *http.Client) (E, error), close func(ctx context.Context, exp E) error) *Receivers[E] {
	return &Receivers[E]{root: root, open: open, close: close, byPath: map[string]E{}}
}

// Each calls export with the exporter of every receiver's socket. A
// receiver that is down loses what export sends; the others still get it.
// A socket nobody listens on (the collector is restarting or stopped) is
// not an error, or an idle grant would report one every export; the other
// errors are joined.
func (r *Receivers[E]) Each(ctx context.Context, export func(E) error) error {
	sockets, err := filepath.Glob(filepath.Join(r.root, "*", SocketName))
	if err != nil {
		return err
	}
	var errs []error
	for _, sock := range sockets {
		exp, err := r.exporter(ctx, sock)
		if err == nil {
			err = export(exp)
		}
		if err != nil && !notListening(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// notListening reports a connection refused, or a socket gone since the
// lookup.
func notListening(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, fs.ErrNotExist)
}

// exporter returns the socket's exporter, opening it the first time.
func (r *Receivers[E]) exporter(ctx context.Context, sock string) (E, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if exp, ok := r.byPath[sock]; ok {
		return exp, nil
	}
	dialer := net.Dialer{}
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, "unix", sock)
		},
	}}
	exp, err := r.open(ctx, client)
	if err != nil {
		return exp, err
	}
	r.byPath[sock] = exp
	return exp, nil
}

// Shutdown closes every exporter opened so far.
func (r *Receivers[E]) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for _, exp := range r.byPath {
		errs = append(errs, r.close(ctx, exp))
	}
	return errors.Join(errs...)
}
