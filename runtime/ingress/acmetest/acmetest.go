package acmetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/letsencrypt/pebble/v2/ca"
	"github.com/letsencrypt/pebble/v2/db"
	"github.com/letsencrypt/pebble/v2/va"
	"github.com/letsencrypt/pebble/v2/wfe"
	"github.com/miekg/dns"
)

// NXDomainPrefix starts names the test DNS says do not exist, so the CA
// cannot validate them.
const NXDomainPrefix = "nxdomain-"

// Server is a running Pebble.
type Server struct {
	// Directory is the ACME directory URL.
	Directory string
	// DirectoryCAFile is a PEM file trusting the directory's own TLS
	// certificate (ingress.TLSOptions.ACMECARoot).
	DirectoryCAFile string
	// Roots trusts the certificates Pebble issues; Root is the one
	// certificate in it.
	Roots *x509.CertPool
	Root  *x509.Certificate
}

// Start starts Pebble, validating against 127.0.0.1:httpPort (HTTP-01)
// and :tlsPort (TLS-ALPN-01), stopped when t ends. Set PEBBLE_VA_NOSLEEP=1
// (t.Setenv) before calling it, or every validation waits up to 5 s.
func Start(t testing.TB, httpPort, tlsPort int) *Server {
	t.Helper()
	return StartAt(t, net.IPv4(127, 0, 0, 1), httpPort, tlsPort)
}

// StartAt is Start with the ACME directory listening on ip, under a TLS
// certificate for that address, so a gateway in a container can reach it
// through a host address (its bridge network's gateway). Validation still
// goes to 127.0.0.1, where the container's ports are published.
func StartAt(t testing.TB, ip net.IP, httpPort, tlsPort int) *Server {
	t.Helper()
	logger := log.New(io.Discard, "", 0)
	store := db.NewMemoryStore()
	authority := ca.New(logger, store, "", "ecdsa", 0, 1, map[string]ca.Profile{"default": {Description: "default"}})
	validator := va.New(logger, httpPort, tlsPort, false, loopbackDNS(t), store)
	front := wfe.New(logger, store, validator, authority, []string{"pebble.letsencrypt.org"}, false, false, 0, 0)
	cert := directoryCert(t, ip)
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: front.Handler()}, TLS: &tls.Config{Certificates: []tls.Certificate{cert}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	caFile := filepath.Join(t.TempDir(), "acme-server.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o644); err != nil {
		t.Fatal(err)
	}
	root := authority.GetRootCert(0).Cert
	roots := x509.NewCertPool()
	roots.AddCert(root)
	return &Server{Directory: srv.URL + wfe.DirectoryPath, DirectoryCAFile: caFile, Roots: roots, Root: root}
}

// directoryCert makes a self-signed certificate for ip, which is also the
// root clients trust for the directory (DirectoryCAFile).
func directoryCert(t testing.TB, ip net.IP) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "acmetest directory"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{ip},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// loopbackDNS answers every A question with 127.0.0.1, so Pebble's
// validation authority reaches the gateway under test for any hostname,
// except NXDomainPrefix names.
func loopbackDNS(t testing.TB) string {
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
			if strings.HasPrefix(question.Name, NXDomainPrefix) {
				m.SetRcode(q, dns.RcodeNameError)
				continue
			}
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
