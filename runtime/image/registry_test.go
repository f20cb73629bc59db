package image_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/slipwayhq/slipway/outbound"
	"github.com/slipwayhq/slipway/runtime/docker"
	"github.com/slipwayhq/slipway/runtime/image"
)

// registry is an HTTP server on loopback standing in for an internal
// service at a registry address: it counts requests and answers with a
// body that must never reach an error.
func registry(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"errors":[{"code":"UNKNOWN","message":"INTERNAL db_password=hunter2"}]}`)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), &n
}

// TestResolve_PullFromRefusedRegistry: on the real engine, an image whose
// registry is on loopback, a private or a link-local address (by address
// or by name) is refused with destination_not_allowed before the daemon
// is asked to pull, so the registry sees nothing; under dev's policy the
// daemon does pull, and the failure it reports carries nothing the
// registry answered.
func TestResolve_PullFromRefusedRegistry(t *testing.T) {
	t.Parallel()
	cli, err := docker.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.Ping(context.Background()); err != nil {
		t.Skipf("no Docker engine: %v", err)
	}
	addr, hits := registry(t)
	_, port, _ := net.SplitHostPort(addr)
	strict := image.NewResolver(cli, true)
	for _, ref := range []string{
		addr + "/team/app:1",
		"localhost:" + port + "/team/app:1",
		"10.1.2.3:5000/team/app:1",
		"169.254.169.254/latest:1",
	} {
		_, err := strict.Resolve(context.Background(), ref, image.Access{})
		var ie *image.Error
		if !errors.As(err, &ie) || ie.Code != outbound.Code {
			t.Fatalf("Resolve(%s) = %v, want %s", ref, err, outbound.Code)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the refused registry saw %d requests", n)
	}
	dev := image.NewResolver(cli, true).WithOutbound(outbound.New(outbound.Config{AllowLoopback: true}))
	_, err = dev.Resolve(context.Background(), addr+"/team/app:1", image.Access{})
	var ie *image.Error
	if !errors.As(err, &ie) || ie.Code != image.CodeUnavailable {
		t.Fatalf("dev pull from the fake registry: %v, want %s", err, image.CodeUnavailable)
	}
	if hits.Load() == 0 {
		t.Fatal("under dev's policy the daemon never contacted the registry; the check above proves nothing")
	}
	if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "INTERNAL") {
		t.Fatalf("the pull error carries the registry's answer: %v", err)
	}
}

func TestRegistryHost(t *testing.T) {
	t.Parallel()
	for ref, want := range map[string]string{
		"nginx":           "registry-1.docker.io",
		"library/nginx:1": "registry-1.docker.io",
		"docker.io/acme/app@sha256:" + strings.Repeat("a", 64): "registry-1.docker.io",
		"ghcr.io/acme/app:1":                "ghcr.io",
		"127.0.0.1:5000/app":                "127.0.0.1",
		"[fd00:ec2::254]:5000/app":          "fd00:ec2::254",
		"registry.internal:443/team/app:v2": "registry.internal",
	} {
		got, err := image.RegistryHost(ref)
		if err != nil || got != want {
			t.Errorf("RegistryHost(%q) = %q, %v; want %q", ref, got, err, want)
		}
	}
	// A public registry name resolving to a private address is refused.
	p := outbound.New(outbound.Config{Lookup: func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("192.168.1.10")}, nil
	}})
	if err := image.CheckPull(context.Background(), p, "registry.example.com/app:1"); err == nil || !strings.Contains(err.Error(), "192.168.1.10") {
		t.Fatalf("CheckPull through a private answer: %v", err)
	}
}
