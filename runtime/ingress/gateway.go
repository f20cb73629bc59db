package ingress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/slipwayhq/slipway/metrics"
)

// Config is everything `slipway gateway` needs.
type Config struct {
	// HTTPAddr and HTTPSAddr are the public listeners (":80", ":443");
	// an empty HTTPSAddr disables TLS.
	HTTPAddr  string
	HTTPSAddr string
	// PrivateAddr is the private listener (plain HTTP, e.g. on a VPN
	// address); empty disables it.
	PrivateAddr string
	Source      Source
	// DataDir keeps the last route table, certificates and the internal CA.
	DataDir string
	TLS     TLSOptions

	// MetricsAddr is the listener of /metrics (slipway_gateway_* and
	// the Go runtime), which requires MetricsToken (or the trimmed
	// contents of MetricsTokenFile) as a bearer token; empty disables it.
	MetricsAddr      string
	MetricsToken     string
	MetricsTokenFile string
	// Metrics records the requests; nil creates a registry when
	// MetricsAddr is set.
	Metrics *metrics.Registry

	// Limits are the request body limits and the trusted proxies.
	Limits Limits
	// Name is what the gateway reports itself as to the control plane
	// (its container's name); empty means the host name.
	Name string

	Log *slog.Logger
	// Resolver defaults to net.DefaultResolver.
	Resolver Resolver
	// Ready, when set, is called once every listener is bound.
	Ready func(Addrs)
}

// Addrs are the bound listener addresses ("" when disabled).
type Addrs struct {
	HTTP, HTTPS, Private, Metrics string
}

// Environment variables read by ConfigFromEnv; gatewayctl sets them on the
// container.
const (
	EnvListenHTTP       = "SLIPWAY_GATEWAY_LISTEN_HTTP"
	EnvListenHTTPS      = "SLIPWAY_GATEWAY_LISTEN_HTTPS"
	EnvListenPrivate    = "SLIPWAY_GATEWAY_LISTEN_PRIVATE"
	EnvControlSocket    = "SLIPWAY_GATEWAY_CONTROL_SOCKET"
	EnvControlURL       = "SLIPWAY_GATEWAY_CONTROL_URL"
	EnvToken            = "SLIPWAY_GATEWAY_TOKEN"
	EnvTokenFile        = "SLIPWAY_GATEWAY_TOKEN_FILE"
	EnvDataDir          = "SLIPWAY_GATEWAY_DATA_DIR"
	EnvCertDir          = "SLIPWAY_GATEWAY_CERT_DIR"
	EnvInternalCA       = "SLIPWAY_GATEWAY_INTERNAL_CA"
	EnvMetricsAddr      = "SLIPWAY_GATEWAY_METRICS_ADDR"
	EnvMetricsTokenFile = "SLIPWAY_GATEWAY_METRICS_TOKEN_FILE"
	EnvACMEDirectory    = "SLIPWAY_ACME_DIRECTORY"
	EnvACMEEmail        = "SLIPWAY_ACME_EMAIL"
	EnvACMECARoot       = "SLIPWAY_ACME_CA_ROOT"
	EnvName             = "SLIPWAY_GATEWAY_ID"
	// EnvMaxBodyBytes is the request body limit in bytes (0: none);
	// EnvBodyIdleTimeout the body idle timeout in seconds; EnvSendTimeout
	// the send timeout in seconds;
	// EnvTrustedProxies a comma-separated list of CIDRs (or addresses).
	EnvMaxBodyBytes    = "SLIPWAY_GATEWAY_MAX_BODY_BYTES"
	EnvBodyIdleTimeout = "SLIPWAY_GATEWAY_BODY_IDLE_TIMEOUT_SECONDS"
	EnvSendTimeout     = "SLIPWAY_GATEWAY_SEND_TIMEOUT_SECONDS"
	EnvTrustedProxies  = "SLIPWAY_GATEWAY_TRUSTED_PROXIES"
)

// ConfigFromEnv reads the gateway configuration from the environment, with
// the defaults of the container (":80", ":443", data in /data); a limit it
// cannot read is an error naming the variable (wrapping ErrLimits), with
// the rest of the configuration read.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	or := func(k, def string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return def
	}
	internalCA, _ := strconv.ParseBool(getenv(EnvInternalCA))
	limits, err := ParseLimits(getenv(EnvMaxBodyBytes), getenv(EnvBodyIdleTimeout), getenv(EnvSendTimeout), getenv(EnvTrustedProxies))
	return Config{
		HTTPAddr:    or(EnvListenHTTP, ":80"),
		HTTPSAddr:   or(EnvListenHTTPS, ":443"),
		PrivateAddr: getenv(EnvListenPrivate),
		Source: Source{
			SocketPath: getenv(EnvControlSocket),
			URL:        getenv(EnvControlURL),
			Token:      getenv(EnvToken),
			TokenFile:  getenv(EnvTokenFile),
		},
		DataDir:          or(EnvDataDir, "/data"),
		MetricsAddr:      getenv(EnvMetricsAddr),
		MetricsTokenFile: getenv(EnvMetricsTokenFile),
		TLS: TLSOptions{
			ACMEDirectory: getenv(EnvACMEDirectory),
			ACMEEmail:     getenv(EnvACMEEmail),
			ACMECARoot:    getenv(EnvACMECARoot),
			CertDir:       getenv(EnvCertDir),
			InternalCA:    internalCA,
		},
		Limits: limits,
		Name:   getenv(EnvName),
	}, err
}

// ErrLimits is what ParseLimits's errors wrap.
var ErrLimits = errors.New("gateway limits")

// ParseLimits reads Limits as the environment (EnvMaxBodyBytes,
// EnvBodyIdleTimeout, EnvSendTimeout, EnvTrustedProxies) writes them;
// empty strings keep the defaults, a body limit of 0 means none.
func ParseLimits(maxBodyBytes, bodyIdleSeconds, sendSeconds, trustedProxies string) (Limits, error) {
	var l Limits
	if maxBodyBytes != "" {
		n, err := strconv.ParseInt(maxBodyBytes, 10, 64)
		if err != nil || n < 0 {
			return Limits{}, fmt.Errorf("%w: %s=%q: must be a number of bytes, 0 for no limit (gateway_max_body_bytes_invalid)", ErrLimits, EnvMaxBodyBytes, maxBodyBytes)
		}
		l.MaxBodyBytes = n
		if n == 0 {
			l.MaxBodyBytes = -1
		}
	}
	for _, s := range []struct {
		env, value, code string
		dst              *time.Duration
	}{
		{EnvBodyIdleTimeout, bodyIdleSeconds, "gateway_body_idle_timeout_invalid", &l.BodyIdleTimeout},
		{EnvSendTimeout, sendSeconds, "gateway_send_timeout_invalid", &l.SendTimeout},
	} {
		if s.value == "" {
			continue
		}
		n, err := strconv.Atoi(s.value)
		if err != nil || n < 1 {
			return Limits{}, fmt.Errorf("%w: %s=%q: must be a positive number of seconds (%s)", ErrLimits, s.env, s.value, s.code)
		}
		*s.dst = time.Duration(n) * time.Second
	}
	for _, s := range strings.Split(trustedProxies, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		p, err := ParseTrustedProxy(s)
		if err != nil {
			return Limits{}, fmt.Errorf("%w: %s: %v (gateway_trusted_proxies_invalid)", ErrLimits, EnvTrustedProxies, err)
		}
		l.TrustedProxies = append(l.TrustedProxies, p)
	}
	return l, nil
}

// ParseTrustedProxy reads one trusted proxy: a CIDR ("10.0.0.0/8") or a
// single address.
func ParseTrustedProxy(s string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is neither a CIDR such as 10.0.0.0/8 nor an IP address", s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// name is what the gateway reports itself as.
func (c Config) name() string {
	if c.Name != "" {
		return c.Name
	}
	host, _ := os.Hostname()
	return host
}

// Run serves until ctx ends, then shuts the listeners down gracefully.
func Run(ctx context.Context, cfg Config) error {
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	if cfg.HTTPAddr == "" {
		return errors.New("gateway: the HTTP listen address is empty (listen_http_missing)")
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("gateway data dir %s: %w", cfg.DataDir, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	proxy := NewProxy(ctx, log, cfg.Resolver)
	proxy.SetLimits(cfg.Limits)
	var metricsToken string
	if cfg.MetricsAddr != "" {
		var err error
		if metricsToken, err = cfg.readMetricsToken(); err != nil {
			return err
		}
		if cfg.Metrics == nil {
			cfg.Metrics = metrics.New(log)
		}
	}
	if cfg.Metrics != nil {
		proxy.ObserveWith(cfg.Metrics)
	}

	// Every listener is bound before TLS is set up, so certmagic's
	// challenge solvers find the ports taken and leave answering to us.
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	listen := func(addr string) (net.Listener, error) {
		if addr == "" {
			return nil, nil
		}
		addr, err := listenAddr(addr)
		if err != nil {
			return nil, fmt.Errorf("gateway listen: %w", err)
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("gateway listen %s: %w", addr, err)
		}
		lns = append(lns, ln)
		return ln, nil
	}
	httpLn, err := listen(cfg.HTTPAddr)
	if err != nil {
		return err
	}
	httpsLn, err := listen(cfg.HTTPSAddr)
	if err != nil {
		return err
	}
	privateLn, err := listen(cfg.PrivateAddr)
	if err != nil {
		return err
	}
	metricsLn, err := listen(cfg.MetricsAddr)
	if err != nil {
		return err
	}

	srv := newServer(proxy, log)
	// The plain-HTTP listeners are served by the event loops (loop.go),
	// which hand the connections they do not serve themselves to srv.
	// Without event loops (not on Linux) srv reads them all. Made before
	// the first table, which starts using the backend pools.
	loops := newLoopServer(proxy, log, srv)
	changed := make(chan struct{}, 1)
	proxy.live.changed = changed
	apply := func(t Table) error {
		if err := proxy.SetTable(t); err != nil {
			return err
		}
		poke(changed)
		return nil
	}
	feeder := &Feeder{Source: cfg.Source, StatePath: filepath.Join(cfg.DataDir, "routes.json"), Apply: apply, Log: log}
	if err := feeder.init(); err != nil {
		return err
	}
	var tlsCfg *tls.Config
	var certs *certificates
	if httpsLn != nil {
		if cfg.TLS.ACMEDirectory != "" && cfg.TLS.Storage == nil {
			// Every gateway of the installation shares the control
			// plane's storage, so a hostname's certificate is obtained
			// once and served by all of them.
			cfg.TLS.Storage = newRemoteStorage(feeder, localCertStorage(cfg.DataDir))
		}
		host, httpPort := splitAddr(httpLn.Addr())
		_, httpsPort := splitAddr(httpsLn.Addr())
		certs, err = newCertificates(ctx, cfg.TLS, cfg.DataDir, proxy, log, host, httpPort, httpsPort, changed)
		if err != nil {
			return err
		}
		proxy.hasCertificate = certs.hasPublicCertificate
		if certs.issuer != nil {
			proxy.acme = certs.issuer
		}
		tlsCfg = certs.tlsConfig()
		apply = func(t Table) error {
			if err := proxy.SetTable(t); err != nil {
				return err
			}
			certs.manage(ctx, t)
			poke(changed)
			return nil
		}
	}

	feeder.Apply = apply
	// Restored before any listener serves: a restart never answers 404
	// for routes the stored table holds.
	go feeder.RunFrom(ctx, feeder.Restore())
	go reportState(ctx, feeder, proxy, certs, cfg.name(), changed)

	errc := make(chan error, 4)
	run := func(what string, serve func() error) {
		go func() {
			if err := serve(); err != nil {
				errc <- fmt.Errorf("gateway %s: %w", what, err)
			}
		}()
	}
	run("server", srv.serve)
	var metricsSrv *http.Server
	var startErr error
	startPlain := func(ln net.Listener, l Listener) string {
		if ln == nil {
			return ""
		}
		addr := ln.Addr().String()
		if loops == nil {
			run("listener "+addr, func() error { return acceptPlain(ln, l, srv) })
			return addr
		}
		if err := loops.add(ln, l, l == ListenerHTTP && proxy.acme != nil); err != nil {
			if startErr == nil {
				startErr = err
			}
		} else {
			// The loops accept on a duplicate of the socket, which they
			// close when they stop: from then on connections are refused.
			ln.Close()
		}
		return addr
	}
	addrs := Addrs{
		HTTP:    startPlain(httpLn, ListenerHTTP),
		Private: startPlain(privateLn, ListenerPrivate),
	}
	if httpsLn != nil {
		addrs.HTTPS = httpsLn.Addr().String()
		run("listener "+addrs.HTTPS, func() error { return srv.serveTLS(httpsLn, tlsCfg) })
	}
	if startErr == nil && loops != nil {
		startErr = loops.start()
	}
	if startErr != nil {
		return fmt.Errorf("gateway: %w", startErr)
	}
	if metricsLn != nil {
		metricsSrv = &http.Server{Handler: metricsHandler(cfg.Metrics, metricsToken), ReadHeaderTimeout: clientHeadTimeout}
		addrs.Metrics = metricsLn.Addr().String()
		run("metrics listener", func() error {
			if err := metricsSrv.Serve(metricsLn); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		})
	}
	log.Info("gateway listening", "http", addrs.HTTP, "https", addrs.HTTPS, "private", addrs.Private, "metrics", addrs.Metrics, "addresses", interfaceAddrs())
	if cfg.Ready != nil {
		cfg.Ready(addrs)
	}

	select {
	case <-ctx.Done():
		err = nil
	case err = <-errc:
	}
	shutdownCtx, stop := context.WithTimeout(context.Background(), shutdownTimeout)
	defer stop()
	if httpsLn != nil {
		httpsLn.Close()
	}
	if loops != nil {
		loops.shutdown(shutdownCtx)
	}
	srv.shutdown(shutdownCtx)
	if metricsSrv != nil {
		metricsSrv.Shutdown(shutdownCtx)
	}
	return err
}

// acceptPlain serves a plain-HTTP listener without event loops: srv's
// HTTP/1 server reads every connection.
func acceptPlain(ln net.Listener, l Listener, srv *server) error {
	return srv.accept(ln, func(c net.Conn) { go srv.serveHTTP1(c, l, nil) })
}

func splitAddr(a net.Addr) (string, int) {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return "", 0
	}
	host := ""
	if !tcp.IP.IsUnspecified() {
		host = tcp.IP.String()
	}
	return host, tcp.Port
}

// interfaceAddrs lists the gateway's own addresses: inside the container
// one per network it is connected to, which routed services receive as
// SLIPWAY_INGRESS_PROXIES.
func interfaceAddrs() []string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []string
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() {
			out = append(out, ipn.IP.String())
		}
	}
	return out
}
