package ingress

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/runtime/ingress/acmetest"
)

func TestGateway_ACMEPebble(t *testing.T) {
	// Pebble reads PEBBLE_VA_NOSLEEP when its VA is created; without it
	// every validation waits up to 5 s. t.Setenv rules out t.Parallel.
	t.Setenv("PEBBLE_VA_NOSLEEP", "1")
	tests := []struct {
		name string
		host string
		opts TLSOptions
	}{
		{"http-01", "http01.example.com", TLSOptions{DisableTLSALPNChallenge: true}},
		{"tls-alpn-01", "alpn.example.com", TLSOptions{DisableHTTPChallenge: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			httpPort, httpsPort := freePort(t), freePort(t)
			acme := acmetest.Start(t, httpPort, httpsPort)

			dir := shortDir(t)
			pub := NewPublisher()
			pub.Wait = 2 * time.Second
			b := &testBundle{dir: dir, cp: startControlPlane(t, pub, filepath.Join(dir, "cp.sock")), resolver: &staticResolver{hosts: map[string][]string{}}}
			opts := tt.opts
			opts.ACMEDirectory, opts.ACMECARoot, opts.ACMEEmail = acme.Directory, acme.DirectoryCAFile, "ops@example.com"
			configure := func(c *Config) {
				c.HTTPAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(httpPort))
				c.HTTPSAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(httpsPort))
				c.TLS = opts
			}
			b.startWith(t, configure)
			port := freePort(t)
			backend(t, "127.0.0.1", port, "app")
			b.resolver.set("web", "127.0.0.1")
			b.publish(t, 1,
				Route{Hostname: tt.host, Visibility: VisibilityPublic, Backend: &Backend{Service: "web", Port: port}},
				Route{Hostname: "private-" + tt.host, Visibility: VisibilityPrivate, Backend: &Backend{Service: "web", Port: port}},
				Route{Hostname: acmetest.NXDomainPrefix + tt.host, Visibility: VisibilityPublic, Backend: &Backend{Service: "web", Port: port}},
			)
			client := &http.Client{Transport: &http.Transport{
				TLSClientConfig: &tls.Config{RootCAs: acme.Roots},
				DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
					var d net.Dialer
					return d.DialContext(ctx, "tcp", b.addrs.HTTPS)
				},
			}, Timeout: 90 * time.Second}
			resp, err := client.Get("https://" + tt.host + "/")
			if err != nil {
				t.Fatalf("HTTPS with Pebble's root: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			leaf := resp.TLS.PeerCertificates[0]
			if resp.StatusCode != 200 || !strings.HasPrefix(string(body), "app") || leaf.DNSNames[0] != tt.host {
				t.Fatalf("got %d %q for certificate %v", resp.StatusCode, body, leaf.DNSNames)
			}
			// The gateway reports the certificate to the control plane:
			// issued, expiring when the served certificate does; the
			// private route has none.
			waitFor(t, func() bool {
				c, ok := b.cp.certificate(tt.host)
				return ok && c.State == CertificateIssued && c.ExpiresAt != nil && c.ExpiresAt.Equal(leaf.NotAfter)
			})
			if c, _ := b.cp.certificate("private-" + tt.host); c.State != CertificateNone {
				t.Fatalf("private route reported %+v", c)
			}
			// A name the CA cannot validate is reported failed, with why.
			waitFor(t, func() bool {
				c, _ := b.cp.certificate(acmetest.NXDomainPrefix + tt.host)
				return c.State == CertificateFailed && strings.Contains(c.LastError, acmetest.NXDomainPrefix+tt.host)
			})
			// Now that the name has a trusted certificate, plain HTTP moves to HTTPS.
			status, _, h := get(t, b.addrs.HTTP, tt.host, "/x?y=1")
			if status != http.StatusPermanentRedirect || h.Get("Location") != "https://"+tt.host+"/x?y=1" {
				t.Fatalf("plain HTTP: %d Location=%q", status, h.Get("Location"))
			}
			// After a restart the stored certificate is loaded with the
			// table: plain HTTP is redirected before any HTTPS visitor.
			b.stop()
			b.startWith(t, configure)
			waitFor(t, func() bool {
				status, _, _ := get(t, b.addrs.HTTP, tt.host, "/")
				return status == http.StatusPermanentRedirect
			})
			// Names outside the table, and private ones, get no certificate.
			for _, name := range []string{"private-" + tt.host, "other.example.com"} {
				if _, err := client.Get("https://" + name + "/"); err == nil {
					t.Fatalf("%s got a certificate on the public listener", name)
				}
			}
		})
	}
}
