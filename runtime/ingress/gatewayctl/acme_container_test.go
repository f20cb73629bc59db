package gatewayctl_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/network"

	"github.com/slipwayhq/slipway/runtime/ingress"
	"github.com/slipwayhq/slipway/runtime/ingress/acmetest"
	"github.com/slipwayhq/slipway/runtime/ingress/gatewayctl"
)

// TestGateway_ContainerACME: the gateway container, given only the
// SLIPWAY_ACME_* settings (the directory's root as a host path), obtains
// a certificate from Pebble for a public route as soon as the route is in
// its table, serves it on the published HTTPS port for that name with the
// backend service answering, and then redirects plain HTTP for the name.
// Pebble listens on the gateway bridge network's host address and
// validates through the ports published on 127.0.0.1.
func TestGateway_ContainerACME(t *testing.T) {
	// Pebble reads PEBBLE_VA_NOSLEEP when its VA is created; without it
	// every validation waits up to 5 s.
	t.Setenv("PEBBLE_VA_NOSLEEP", "1")
	e := setup(t)
	ctx := t.Context()
	cfg := e.cfg
	cfg.HTTPSPort = freePort(t)
	hostIP := bridgeGateway(t, e, cfg.Network)
	acme := acmetest.StartAt(t, hostIP, cfg.HTTPPort, cfg.HTTPSPort)
	cfg.Env = map[string]string{
		ingress.EnvACMEDirectory: acme.Directory,
		ingress.EnvACMECARoot:    acme.DirectoryCAFile,
		ingress.EnvACMEEmail:     "ops@example.com",
	}

	svc := "gwa-" + e.id + "-web"
	e.service(t, svc, 1, "secure-v1")
	if _, err := e.m.EnsureGateway(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.ConnectNetwork(ctx, e.overlay); err != nil {
		t.Fatal(err)
	}
	host := "secure-" + e.id + ".example.com"
	e.publish(t, 1, ingress.Route{Hostname: host, Visibility: ingress.VisibilityPublic, Backend: &ingress.Backend{Service: svc, Port: 8080, Network: e.overlay}})

	httpsAddr := fmt.Sprintf("127.0.0.1:%d", cfg.HTTPSPort)
	client := &http.Client{
		Timeout: 15 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: acme.Roots},
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "tcp", httpsAddr)
			},
		},
	}
	var resp *http.Response
	var body string
	eventually(t, "HTTPS with a certificate from Pebble reaches the backend", 3*time.Minute, func() (bool, string) {
		r, err := client.Get("https://" + host + "/version")
		if err != nil {
			return false, err.Error()
		}
		b, err := io.ReadAll(r.Body)
		r.Body.Close()
		resp, body = r, strings.TrimSpace(string(b))
		return err == nil && r.StatusCode == 200 && body == "secure-v1", fmt.Sprintf("%d %q %v", r.StatusCode, b, err)
	})
	// The handshake verified the chain up to Pebble's root (RootCAs);
	// check it ends there and names the route.
	chains := resp.TLS.VerifiedChains
	if len(chains) == 0 {
		t.Fatal("no verified chain")
	}
	leaf, root := chains[0][0], chains[0][len(chains[0])-1]
	if len(leaf.DNSNames) != 1 || leaf.DNSNames[0] != host {
		t.Errorf("leaf names %v, want [%s]", leaf.DNSNames, host)
	}
	if !root.Equal(acme.Root) || len(chains[0]) < 2 {
		t.Errorf("chain of %d ends at %q, want Pebble's root %q above the leaf", len(chains[0]), root.Subject, acme.Root.Subject)
	}

	// Now the name has a trusted certificate, plain HTTP moves to HTTPS.
	status, _, h, err := get(e.httpAddr, host, "/x?y=1")
	if err != nil || status != http.StatusPermanentRedirect || h.Get("Location") != "https://"+host+"/x?y=1" {
		t.Fatalf("plain HTTP: %d Location=%q %v, want 308 to https", status, h.Get("Location"), err)
	}
	// A name outside the table gets no certificate.
	if _, err := client.Get("https://other.example.com/"); err == nil {
		t.Fatal("a name outside the table got a certificate")
	}
}

// bridgeGateway creates the gateway's bridge network ahead of
// EnsureGateway (which then uses it, and label cleanup removes it) and
// returns the host's address on it, which the container can reach.
func bridgeGateway(t *testing.T, e *env, name string) net.IP {
	t.Helper()
	labels := map[string]string{gatewayctl.LabelRole: "gateway"}
	for k, v := range e.labels {
		labels[k] = v
	}
	if _, err := e.cli.NetworkCreate(t.Context(), name, network.CreateOptions{Driver: "bridge", Labels: labels}); err != nil {
		t.Fatal(err)
	}
	n, err := e.cli.NetworkInspect(t.Context(), name, network.InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range n.IPAM.Config {
		if ip := net.ParseIP(c.Gateway).To4(); ip != nil {
			return ip
		}
	}
	t.Fatalf("network %s has no IPv4 gateway: %+v", name, n.IPAM.Config)
	return nil
}
