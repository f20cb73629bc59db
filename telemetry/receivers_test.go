package telemetry_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/slipwayhq/slipway/telemetry"
)

// TestReceivers_Each sends through every receiver socket: one opened
// exporter per socket, reused; a socket nobody listens on is skipped
// quietly, a receiver answering with an error is reported.
func TestReceivers_Each(t *testing.T) {
	root := t.TempDir()
	for _, dir := range []string{"dead", "fails", "ok"} {
		if err := os.Mkdir(filepath.Join(root, dir), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	dead, err := net.Listen("unix", filepath.Join(root, "dead", telemetry.SocketName))
	if err != nil {
		t.Fatal(err)
	}
	dead.(*net.UnixListener).SetUnlinkOnClose(false)
	_ = dead.Close()
	serve := func(dir string, status int) {
		ln, err := net.Listen("unix", filepath.Join(root, dir, telemetry.SocketName))
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) })}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
	}
	serve("fails", http.StatusServiceUnavailable)
	serve("ok", http.StatusOK)

	type exporter struct{ client *http.Client }
	opened, closed := 0, 0
	r := telemetry.NewReceivers(root,
		func(_ context.Context, c *http.Client) (*exporter, error) { opened++; return &exporter{c}, nil },
		func(context.Context, *exporter) error { closed++; return nil })
	send := func(e *exporter) error {
		resp, err := e.client.Get("http://localhost/v1/logs")
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return errors.New(resp.Status)
		}
		return nil
	}
	for range 2 {
		err := r.Each(context.Background(), send)
		if err == nil || err.Error() != "503 Service Unavailable" {
			t.Fatalf("Each: %v, want only the failing receiver's 503", err)
		}
	}
	if err := r.Shutdown(context.Background()); err != nil || opened != 3 || closed != 3 {
		t.Fatalf("opened %d, closed %d exporters (%v); want one per socket", opened, closed, err)
	}
}
