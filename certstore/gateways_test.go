package certstore_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/certstore"
	"github.com/slipwayhq/slipway/keyring/keyringtest"
	"github.com/slipwayhq/slipway/runtime/ingress"
	"github.com/slipwayhq/slipway/runtime/ingress/acmetest"
	"github.com/slipwayhq/slipway/store/storetest"
)

// resolver answers every backend name with the loopback address.
type resolver struct{}

func (resolver) LookupHost(context.Context, string) ([]string, error) {
	return []string{"127.0.0.1"}, nil
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestGateways_ShareOneCertificate runs two gateways on one control plane
// whose certificate storage is Postgres (as serve does): both start
// obtaining the public hostname's certificate at once, one obtains it
// from the ACME server (Pebble), and both serve that very certificate.
// Pebble validates on the first gateway's ports only, so when the second
// one wins the lock, the first answers its challenge from the shared
// storage, as a gateway on another node would.
func TestGateways_ShareOneCertificate(t *testing.T) {
	t.Setenv("PEBBLE_VA_NOSLEEP", "1")
	const host = "shared.example.com"
	ctx := context.Background()
	st := storetest.NewSchema(t)
	kr := keyringtest.New(t)

	type gw struct {
		name        string
		http, https int
		addrs       ingress.Addrs
		dir         string
		cancel      context.CancelFunc
		done        chan error
	}
	gws := []*gw{{name: "gw-a"}, {name: "gw-b"}}
	for _, g := range gws {
		g.http, g.https = freePort(t), freePort(t)
	}
	acme := acmetest.Start(t, gws[0].http, gws[0].https)

	// The control plane: route table, state reports, shared storage.
	dir, err := os.MkdirTemp("", "cs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := filepath.Join(dir, "cp.sock")
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	pub := ingress.NewPublisher()
	pub.Wait = 2 * time.Second
	mux := http.NewServeMux()
	mux.Handle(ingress.RoutesPath, pub)
	mux.Handle(ingress.CertificatesPath, ingress.CertificateReceiver(func(context.Context, ingress.CertificateReport) error { return nil }))
	mux.Handle(ingress.StoragePath, ingress.StorageHandler(certstore.New(st, kr), nil))
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	backend := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "app") })}
	bln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go backend.Serve(bln)
	t.Cleanup(func() { backend.Close() })
	if err := pub.Publish(ingress.Table{Version: 1, Routes: []ingress.Route{{
		Hostname: host, Visibility: ingress.VisibilityPublic,
		Backend: &ingress.Backend{Service: "web", Port: bln.Addr().(*net.TCPAddr).Port},
	}}}); err != nil {
		t.Fatal(err)
	}

	for _, g := range gws {
		g.dir = filepath.Join(dir, g.name)
		ready := make(chan ingress.Addrs, 1)
		gctx, cancel := context.WithCancel(ctx)
		g.cancel, g.done = cancel, make(chan error, 1)
		cfg := ingress.Config{
			HTTPAddr:  "127.0.0.1:" + strconv.Itoa(g.http),
			HTTPSAddr: "127.0.0.1:" + strconv.Itoa(g.https),
			Source:    ingress.Source{SocketPath: socket},
			DataDir:   g.dir,
			TLS:       ingress.TLSOptions{ACMEDirectory: acme.Directory, ACMECARoot: acme.DirectoryCAFile, ACMEEmail: "ops@example.com"},
			Name:      g.name,
			Log:       slog.New(slog.NewTextHandler(io.Discard, nil)),
			Resolver:  resolver{},
			Ready:     func(a ingress.Addrs) { ready <- a },
		}
		go func() { g.done <- ingress.Run(gctx, cfg) }()
		select {
		case g.addrs = <-ready:
		case err := <-g.done:
			t.Fatalf("gateway %s: %v", g.name, err)
		}
		t.Cleanup(func() { cancel(); <-g.done })
	}

	serial := func(g *gw) (string, error) {
		client := &http.Client{Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: acme.Roots},
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "tcp", g.addrs.HTTPS)
			},
		}, Timeout: 10 * time.Second}
		defer client.CloseIdleConnections()
		resp, err := client.Get("https://" + host + "/")
		if err != nil {
			return "", err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != "app" {
			return "", fmt.Errorf("%s: %d %q", g.name, resp.StatusCode, body)
		}
		return resp.TLS.PeerCertificates[0].SerialNumber.String(), nil
	}
	serials := map[string]string{}
	deadline := time.Now().Add(2 * time.Minute)
	for _, g := range gws {
		for {
			s, err := serial(g)
			if err == nil {
				serials[g.name] = s
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("gateway %s never served %s with a certificate Pebble issued: %v", g.name, host, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if serials["gw-a"] != serials["gw-b"] {
		t.Fatalf("the gateways serve different certificates (serials %v): each obtained its own", serials)
	}
	// One certificate in the shared storage, none left in either
	// gateway's own files but the cache of what the storage holds.
	keys, err := certstore.New(st, kr).List(ctx, "certificates", true)
	if err != nil {
		t.Fatal(err)
	}
	var crts []string
	for _, k := range keys {
		if strings.HasSuffix(k, "/"+host+".crt") {
			crts = append(crts, k)
		}
	}
	if len(crts) != 1 {
		t.Fatalf("certificates for %s in the shared storage: %q, want one", host, crts)
	}

	// A gateway restarted while the control plane is down still serves
	// the certificate, from its cache of the shared storage.
	srv.Close()
	a := gws[0]
	a.cancel()
	<-a.done
	actx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	ready := make(chan ingress.Addrs, 1)
	done := make(chan error, 1)
	go func() {
		done <- ingress.Run(actx, ingress.Config{
			HTTPAddr: "127.0.0.1:" + strconv.Itoa(a.http), HTTPSAddr: "127.0.0.1:" + strconv.Itoa(a.https),
			Source: ingress.Source{SocketPath: socket}, DataDir: a.dir, Name: a.name, Resolver: resolver{},
			TLS: ingress.TLSOptions{ACMEDirectory: acme.Directory, ACMECARoot: acme.DirectoryCAFile, ACMEEmail: "ops@example.com"},
			Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Ready: func(x ingress.Addrs) { ready <- x },
		})
	}()
	select {
	case a.addrs = <-ready:
	case err := <-done:
		t.Fatalf("restarted gateway: %v", err)
	}
	a.done = done
	a.cancel = cancel
	deadline = time.Now().Add(30 * time.Second)
	for {
		s, err := serial(a)
		if err == nil && s == serials["gw-a"] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the restarted gateway without its control plane serves no stored certificate: %v (serial %s)", err, s)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
