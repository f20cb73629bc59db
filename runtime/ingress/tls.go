package ingress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/caddyserver/certmagic"
	"github.com/mholt/acmez/v3"
	"go.uber.org/zap"
)

// TLSOptions configure where HTTPS certificates come from. In order of
// preference for a name: the operator's own certificate (CertDir), ACME
// (public exact hostnames only, when ACMEDirectory is set), the internal CA
// (when InternalCA is set: wildcards, and everything in dev).
type TLSOptions struct {
	// ACMEDirectory is the ACME directory URL; empty disables ACME.
	ACMEDirectory string
	ACMEEmail     string
	// ACMECARoot is a PEM file of roots to trust for the ACME server
	// itself (a private ACME CA, or Pebble in tests).
	ACMECARoot string
	// CertDir holds operator certificates as NAME.crt + NAME.key pairs
	// (each certificate serves the names it lists, wildcards included).
	CertDir string
	// InternalCA issues from a local CA kept in the data directory.
	InternalCA bool
	// DisableHTTPChallenge / DisableTLSALPNChallenge restrict the ACME
	// challenge types (both are enabled by default).
	DisableHTTPChallenge    bool
	DisableTLSALPNChallenge bool
}

// certificates answers TLS handshakes for the HTTPS listener.
type certificates struct {
	proxy    *Proxy
	log      *slog.Logger
	magic    *certmagic.Config
	cache    *certmagic.Cache
	issuer   *certmagic.ACMEIssuer
	operator map[string]*tls.Certificate
	ca       *localCA

	mu      sync.Mutex
	checked map[string]bool // hostnames already looked up in storage
}

// newCertificates sets up TLS. listenHost, httpPort and httpsPort are where
// the gateway's own listeners are, so certmagic's challenge solvers find the
// ports taken and leave the answering to the gateway's handlers.
func newCertificates(ctx context.Context, o TLSOptions, dataDir string, p *Proxy, log *slog.Logger, listenHost string, httpPort, httpsPort int) (*certificates, error) {
	c := &certificates{proxy: p, log: log, operator: map[string]*tls.Certificate{}, checked: map[string]bool{}}
	if o.CertDir != "" {
		if err := c.loadOperatorCerts(o.CertDir); err != nil {
			return nil, err
		}
	}
	if o.InternalCA {
		ca, err := loadOrCreateLocalCA(filepath.Join(dataDir, "internal-ca"))
		if err != nil {
			return nil, fmt.Errorf("internal CA: %w", err)
		}
		c.ca = ca
		log.Info("internal CA ready; trust its root for https in dev", "root", ca.CertPath)
	}
	if o.ACMEDirectory != "" {
		var roots *x509.CertPool
		if o.ACMECARoot != "" {
			pem, err := os.ReadFile(o.ACMECARoot)
			if err != nil {
				return nil, fmt.Errorf("acme_ca_root %s: %w", o.ACMECARoot, err)
			}
			roots = x509.NewCertPool()
			if !roots.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("acme_ca_root %s: no PEM certificate found (acme_ca_root_invalid)", o.ACMECARoot)
			}
		}
		zl, _ := zap.NewProduction()
		var cfg *certmagic.Config
		c.cache = certmagic.NewCache(certmagic.CacheOptions{
			GetConfigForCert: func(certmagic.Certificate) (*certmagic.Config, error) { return cfg, nil },
			Logger:           zl,
		})
		cfg = certmagic.New(c.cache, certmagic.Config{
			Storage:  &certmagic.FileStorage{Path: filepath.Join(dataDir, "certmagic")},
			OnDemand: &certmagic.OnDemandConfig{DecisionFunc: c.allowACME},
			Logger:   zl,
		})
		c.issuer = certmagic.NewACMEIssuer(cfg, certmagic.ACMEIssuer{
			CA:                      o.ACMEDirectory,
			TestCA:                  o.ACMEDirectory,
			Email:                   o.ACMEEmail,
			Agreed:                  true,
			TrustedRoots:            roots,
			ListenHost:              listenHost,
			AltHTTPPort:             httpPort,
			AltTLSALPNPort:          httpsPort,
			DisableHTTPChallenge:    o.DisableHTTPChallenge,
			DisableTLSALPNChallenge: o.DisableTLSALPNChallenge,
			Logger:                  zl,
		})
		cfg.Issuers = []certmagic.Issuer{c.issuer}
		c.magic = cfg
		go func() { <-ctx.Done(); c.cache.Stop() }()
	}
	return c, nil
}

func (c *certificates) loadOperatorCerts(dir string) error {
	crts, err := filepath.Glob(filepath.Join(dir, "*.crt"))
	if err != nil {
		return err
	}
	for _, crt := range crts {
		pair, err := tls.LoadX509KeyPair(crt, strings.TrimSuffix(crt, ".crt")+".key")
		if err != nil {
			return fmt.Errorf("gateway_cert_dir: load %s: %w", crt, err)
		}
		for _, name := range pair.Leaf.DNSNames {
			c.operator[strings.ToLower(name)] = &pair
		}
		c.log.Info("operator certificate loaded", "file", crt, "names", pair.Leaf.DNSNames, "expires", pair.Leaf.NotAfter)
	}
	return nil
}

// allowACME is certmagic's on-demand decision: only public, exact
// hostnames in the current table get an ACME certificate, so nobody can
// make the gateway request certificates for arbitrary names.
func (c *certificates) allowACME(_ context.Context, name string) error {
	r := c.proxy.Lookup(ListenerHTTPS, name)
	if r == nil || r.Hostname != name {
		return fmt.Errorf("%s is not a public exact hostname in the route table", name)
	}
	return nil
}

func (c *certificates) operatorCert(name string) *tls.Certificate {
	if crt := c.operator[name]; crt != nil {
		return crt
	}
	if dot := strings.IndexByte(name, '.'); dot > 0 {
		return c.operator["*"+name[dot:]]
	}
	return nil
}

func (c *certificates) getCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c.magic != nil && len(hello.SupportedProtos) == 1 && hello.SupportedProtos[0] == acmez.ACMETLS1Protocol {
		return c.magic.GetCertificate(hello)
	}
	name := NormalizeHost(hello.ServerName)
	r := c.proxy.Lookup(ListenerHTTPS, name)
	if r == nil {
		return nil, fmt.Errorf("no public route for server name %q", name)
	}
	if crt := c.operatorCert(name); crt != nil {
		return crt, nil
	}
	if c.magic != nil && r.Hostname == name {
		return c.magic.GetCertificate(hello)
	}
	if c.ca != nil {
		return c.ca.leaf(r.Hostname)
	}
	return nil, errors.New("no certificate source for " + name)
}

// hasPublicCertificate says whether plain HTTP for host should move to
// HTTPS: it does when a browser would trust what we serve there (an
// operator or ACME certificate), never for the internal CA.
func (c *certificates) hasPublicCertificate(host string) bool {
	if c.operatorCert(host) != nil {
		return true
	}
	return c.cache != nil && len(c.cache.AllMatchingCertificates(host)) > 0
}

// loadStored puts certificates obtained before a restart back into the
// cache (certmagic then renews them), so plain HTTP for those names is
// redirected at once rather than after the first HTTPS visitor. Each name
// is looked up once per process.
func (c *certificates) loadStored(ctx context.Context, t Table) {
	if c.magic == nil {
		return
	}
	for _, r := range t.Routes {
		if r.Visibility != VisibilityPublic || strings.HasPrefix(r.Hostname, "*.") {
			continue
		}
		c.mu.Lock()
		seen := c.checked[r.Hostname]
		c.checked[r.Hostname] = true
		c.mu.Unlock()
		if seen || len(c.cache.AllMatchingCertificates(r.Hostname)) > 0 {
			continue
		}
		if !c.magic.Storage.Exists(ctx, certmagic.StorageKeys.SiteCert(c.issuer.IssuerKey(), r.Hostname)) {
			continue
		}
		if _, err := c.magic.CacheManagedCertificate(ctx, r.Hostname); err != nil {
			c.log.Warn("load stored certificate", "hostname", r.Hostname, "err", err)
		}
	}
}

func (c *certificates) tlsConfig() *tls.Config {
	return &tls.Config{
		GetCertificate: c.getCertificate,
		NextProtos:     []string{"h2", "http/1.1", acmez.ACMETLS1Protocol},
		MinVersion:     tls.VersionTLS12,
	}
}

// httpHandler answers HTTP-01 challenges before routing.
func (c *certificates) httpHandler(h http.Handler) http.Handler {
	if c.issuer == nil {
		return h
	}
	return c.issuer.HTTPChallengeHandler(h)
}
