package ingress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/letsencrypt/pebble/v2/ca"
	"github.com/letsencrypt/pebble/v2/db"
	"github.com/letsencrypt/pebble/v2/va"
	"github.com/letsencrypt/pebble/v2/wfe"
	"github.com/miekg/dns"
)

// loopbackDNS answers every A question with 127.0.0.1, so Pebble's
// validation authority reaches the gateway under test for any hostname.
func loopbackDNS(t *testing.T) string {
	t.Helper()
	// Pebble's VA asks its custom resolver over TCP.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{Listener: ln, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		for _, question := range q.Question {
			if question.Qtype == dns.TypeA {
				m.Answer = append(m.Answer, &dns.A{
					Hdr: dns.RR_Header{Name: question.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60},
					A:   net.IPv4(127, 0, 0, 1),
				})
			}
		}
		w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return ln.Addr().String()
}

// pebble starts an in-process Pebble ACME server whose validation
// authority connects to 127.0.0.1:httpPort and :tlsPort. It returns the
// directory URL, a PEM file trusting the directory's own TLS certificate,
// and a pool with the root that signs issued certificates.
func pebble(t *testing.T, httpPort, tlsPort int) (string, string, *x509.CertPool) {
	t.Helper()
	logger := log.New(io.Discard, "", 0)
	store := db.NewMemoryStore()
	authority := ca.New(logger, store, "", "ecdsa", 0, 1, map[string]ca.Profile{"default": {Description: "default"}})
	validator := va.New(logger, httpPort, tlsPort, false, loopbackDNS(t), store)
	front := wfe.New(logger, store, validator, authority, []string{"pebble.letsencrypt.org"}, false, false, 0, 0)
	srv := httptest.NewTLSServer(front.Handler())
	t.Cleanup(srv.Close)
	caFile := filepath.Join(t.TempDir(), "acme-server.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(authority.GetRootCert(0).Cert)
	return srv.URL + wfe.DirectoryPath, caFile, roots
}

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
			directory, caFile, roots := pebble(t, httpPort, httpsPort)

			dir := shortDir(t)
			pub := NewPublisher()
			pub.Wait = 2 * time.Second
			b := &testBundle{dir: dir, cp: startControlPlane(t, pub, filepath.Join(dir, "cp.sock")), resolver: &staticResolver{hosts: map[string][]string{}}}
			opts := tt.opts
			opts.ACMEDirectory, opts.ACMECARoot, opts.ACMEEmail = directory, caFile, "ops@example.com"
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
			)
			client := &http.Client{Transport: &http.Transport{
				TLSClientConfig: &tls.Config{RootCAs: roots},
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
