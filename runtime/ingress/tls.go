package ingress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
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
	// Storage keeps ACME certificates, the account and challenge tokens;
	// Run sets the control plane's shared storage (remoteStorage), and
	// nil means files in the data directory.
	Storage certmagic.Storage
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

	// changed is poked whenever a certificate's state may have moved,
	// so the report to the control plane goes out without waiting.
	changed chan<- struct{}

	mu       sync.Mutex
	managing map[string]context.CancelFunc // hostnames being obtained or kept
	attempts map[string]acmeAttempt        // the last ACME activity per hostname
}

// acmeAttempt is what certmagic last said about obtaining or renewing a
// hostname's certificate.
type acmeAttempt struct {
	running bool
	lastErr string
}

// newCertificates sets up TLS. listenHost, httpPort and httpsPort are where
// the gateway's own listeners are, so certmagic's challenge solvers find the
// ports taken and leave the answering to the gateway's handlers.
func newCertificates(ctx context.Context, o TLSOptions, dataDir string, p *Proxy, log *slog.Logger, listenHost string, httpPort, httpsPort int, changed chan<- struct{}) (*certificates, error) {
	c := &certificates{proxy: p, log: log, operator: map[string]*tls.Certificate{}, changed: changed,
		managing: map[string]context.CancelFunc{}, attempts: map[string]acmeAttempt{}}
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
		storage := o.Storage
		if storage == nil {
			storage = localCertStorage(dataDir)
		}
		cfg = certmagic.New(c.cache, certmagic.Config{
			Storage:  storage,
			OnDemand: &certmagic.OnDemandConfig{DecisionFunc: c.allowACME},
			OnEvent:  c.onEvent,
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

// localCertStorage is certmagic's storage in the gateway's data
// directory: all of it without a control plane's, a cache of it with one.
func localCertStorage(dataDir string) *certmagic.FileStorage {
	return &certmagic.FileStorage{Path: filepath.Join(dataDir, "certmagic")}
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

// manage starts ACME for every public exact hostname of t that is new to
// this process, without waiting for a first HTTPS visitor: a certificate
// obtained before a restart is loaded from storage (so plain HTTP for it is
// redirected at once), any other is obtained in the background, retried
// with certmagic's backoff while it fails, and renewed once cached.
// Hostnames that left the table stop being retried.
func (c *certificates) manage(ctx context.Context, t Table) {
	if c.magic == nil {
		return
	}
	want := make(map[string]bool, len(t.Routes))
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range t.Routes {
		if r.Visibility != VisibilityPublic || strings.HasPrefix(r.Hostname, "*.") || c.operatorCert(r.Hostname) != nil {
			continue
		}
		want[r.Hostname] = true
		if c.managing[r.Hostname] != nil {
			continue
		}
		mctx, cancel := context.WithCancel(ctx)
		c.managing[r.Hostname] = cancel
		go c.obtain(mctx, r.Hostname)
	}
	for name, cancel := range c.managing {
		if !want[name] {
			cancel()
			delete(c.managing, name)
			delete(c.attempts, name)
		}
	}
}

func (c *certificates) obtain(ctx context.Context, name string) {
	defer c.poke()
	if len(c.cache.AllMatchingCertificates(name)) > 0 {
		return
	}
	if c.magic.Storage.Exists(ctx, certmagic.StorageKeys.SiteCert(c.issuer.IssuerKey(), name)) {
		if _, err := c.magic.CacheManagedCertificate(ctx, name); err == nil {
			return
		} else {
			c.log.Warn("load stored certificate", "hostname", name, "err", err)
		}
	}
	if err := c.magic.ObtainCertAsync(ctx, name); err != nil {
		if ctx.Err() == nil {
			c.log.Warn("obtain certificate", "hostname", name, "err", err)
		}
		return
	}
	if _, err := c.magic.CacheManagedCertificate(ctx, name); err != nil {
		c.log.Warn("load obtained certificate", "hostname", name, "err", err)
	}
}

// onEvent follows certmagic's obtain and renew attempts (its own ones,
// on-demand ones during handshakes, and renewals) for the state report.
func (c *certificates) onEvent(_ context.Context, event string, data map[string]any) error {
	name, _ := data["identifier"].(string)
	if name == "" {
		return nil
	}
	c.mu.Lock()
	a := c.attempts[name]
	switch event {
	case "cert_obtaining":
		a.running = true
	case "cert_obtained":
		a = acmeAttempt{}
	case "cert_failed":
		a.running = false
		a.lastErr = fmt.Sprint(data["error"])
	default:
		c.mu.Unlock()
		return nil
	}
	c.attempts[name] = a
	c.mu.Unlock()
	c.poke()
	return nil
}

func (c *certificates) poke() { poke(c.changed) }

// status says how HTTPS serves route r now.
func (c *certificates) status(r *Route) CertificateStatus {
	s := CertificateStatus{Hostname: r.Hostname, State: CertificateNone}
	if c == nil || r.Visibility != VisibilityPublic {
		return s
	}
	if crt := c.operatorCert(r.Hostname); crt != nil {
		s.State, s.ExpiresAt = CertificateOperator, &crt.Leaf.NotAfter
		return s
	}
	if c.magic != nil && !strings.HasPrefix(r.Hostname, "*.") {
		for _, crt := range c.cache.AllMatchingCertificates(r.Hostname) {
			if crt.Leaf != nil && (s.ExpiresAt == nil || crt.Leaf.NotAfter.After(*s.ExpiresAt)) {
				s.State, s.ExpiresAt = CertificateIssued, &crt.Leaf.NotAfter
			}
		}
		c.mu.Lock()
		a := c.attempts[r.Hostname]
		c.mu.Unlock()
		s.LastError = a.lastErr
		switch {
		case s.State == CertificateIssued:
		case a.lastErr != "":
			// Stays failed while certmagic retries, until one succeeds.
			s.State = CertificateFailed
		default:
			// Obtaining, or about to: manage starts every public name.
			s.State = CertificatePending
		}
		return s
	}
	if c.ca != nil {
		s.State = CertificateInternal
	}
	return s
}

func (c *certificates) tlsConfig() *tls.Config {
	return &tls.Config{
		GetCertificate: c.getCertificate,
		NextProtos:     []string{"h2", "http/1.1", acmez.ACMETLS1Protocol},
		MinVersion:     tls.VersionTLS12,
	}
}
