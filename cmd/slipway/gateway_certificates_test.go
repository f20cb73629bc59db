package main

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/gatewayfeed"
	"github.com/slipwayhq/slipway/keyring/keyringtest"

	"github.com/slipwayhq/slipway/runtime/ingress"
	"github.com/slipwayhq/slipway/runtime/ingress/acmetest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// loopbackResolver resolves every backend name to 127.0.0.1.
type loopbackResolver struct{}

func (loopbackResolver) LookupHost(context.Context, string) ([]string, error) {
	return []string{"127.0.0.1"}, nil
}

// TestGatewayFeed_CertificateStates runs serve's gateway feed on a real
// store and a real gateway against an in-process Pebble: the gateway
// obtains a certificate for the stored public route on its own and reports
// it back over the socket, so the store shows it issued with the served
// certificate's expiry; a name the CA cannot validate shows failed with the
// error, and a private route none.
func TestGatewayFeed_CertificateStates(t *testing.T) {
	// Pebble reads PEBBLE_VA_NOSLEEP when its VA is created (t.Setenv
	// rules out t.Parallel).
	t.Setenv("PEBBLE_VA_NOSLEEP", "1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := storetest.NewSchema(t)
	tenant := storetest.NewTenant(t, st, "certificates", "notes")
	team, env := tenant.Team, tenant.Env
	const issued, failing, private = "tls.example.com", acmetest.NXDomainPrefix + "tls.example.com", "private.example.com"
	if err := st.SetEnvironmentRoutes(ctx, team.ID, env.ID, []store.DeployedRoute{
		{Hostname: issued, Visibility: "public", Service: "web", BackendService: "web", BackendPort: 8080},
		{Hostname: failing, Visibility: "public", Service: "web", BackendService: "web", BackendPort: 8080},
		{Hostname: private, Visibility: "private", Service: "web", BackendService: "web", BackendPort: 8080},
	}); err != nil {
		t.Fatal(err)
	}

	// A short path: unix sockets allow 108 bytes.
	dir, err := os.MkdirTemp("", "gwcert")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if _, err := gatewayfeed.Start(ctx, st, keyringtest.New(t), filepath.Join(dir, "feed"), gatewayfeed.TCP{}, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	httpPort, httpsPort := freeTCPPort(t), freeTCPPort(t)
	acme := acmetest.Start(t, httpPort, httpsPort)
	done := make(chan error, 1)
	go func() {
		done <- ingress.Run(ctx, ingress.Config{
			HTTPAddr:  net.JoinHostPort("127.0.0.1", strconv.Itoa(httpPort)),
			HTTPSAddr: net.JoinHostPort("127.0.0.1", strconv.Itoa(httpsPort)),
			Source:    ingress.Source{SocketPath: filepath.Join(dir, "feed", gatewayfeed.SocketName)},
			DataDir:   filepath.Join(dir, "gateway"),
			TLS:       ingress.TLSOptions{ACMEDirectory: acme.Directory, ACMECARoot: acme.DirectoryCAFile, ACMEEmail: "ops@example.com", DisableTLSALPNChallenge: true},
			Log:       slog.New(slog.DiscardHandler),
			Resolver:  loopbackResolver{},
		})
	}()
	t.Cleanup(func() { cancel(); <-done })

	var certs map[string]store.RouteCertificate
	deadline := time.Now().Add(60 * time.Second)
	for {
		if certs, err = st.ListEnvironmentCertificates(ctx, team.ID, env.ID); err != nil {
			t.Fatal(err)
		}
		if certs[issued].State == "issued" && certs[failing].State == "failed" && certs[private].State == "none" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("certificate states after 60s: %+v", certs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	exp := certs[issued].ExpiresAt
	if exp == nil || exp.Before(time.Now().Add(24*time.Hour)) || certs[issued].LastError != "" {
		t.Fatalf("issued certificate: %+v", certs[issued])
	}
	if certs[failing].LastError == "" || certs[failing].ExpiresAt != nil {
		t.Fatalf("failed certificate: %+v", certs[failing])
	}
	// Another team never sees these states.
	other, err := st.CreateTeam(ctx, "Other", "other")
	if err != nil {
		t.Fatal(err)
	}
	if leaked, err := st.ListEnvironmentCertificates(ctx, other.ID, env.ID); err != nil || len(leaked) != 0 {
		t.Fatalf("other team: %v %v", leaked, err)
	}
	// A withdrawn route's state goes with the next report.
	if err := st.SetEnvironmentRoutes(ctx, team.ID, env.ID, []store.DeployedRoute{
		{Hostname: issued, Visibility: "public", Service: "web", BackendService: "web", BackendPort: 8080},
	}); err != nil {
		t.Fatal(err)
	}
	if err := st.ReportRouteCertificates(ctx, []store.RouteCertificate{{Hostname: failing, State: "failed", LastError: "late"}}); err != nil {
		t.Fatal(err)
	}
	if certs, err = st.ListEnvironmentCertificates(ctx, team.ID, env.ID); err != nil || len(certs) != 1 || certs[issued].State != "issued" {
		t.Fatalf("after withdrawing routes: %+v %v", certs, err)
	}
}

func freeTCPPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
