package ingress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/slipwayhq/slipway/metrics"
	"github.com/valyala/fasthttp"
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
)

// ConfigFromEnv reads the gateway configuration from the environment, with
// the defaults of the container (":80", ":443", data in /data).
func ConfigFromEnv(getenv func(string) string) Config {
	or := func(k, def string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return def
	}
	internalCA, _ := strconv.ParseBool(getenv(EnvInternalCA))
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
	}
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

	httpHandler := proxy.Handler(ListenerHTTP)
	changed := make(chan struct{}, 1)
	apply := func(t Table) error {
		if err := proxy.SetTable(t); err != nil {
			return err
		}
		poke(changed)
		return nil
	}
	var tlsCfg *tls.Config
	var certs *certificates
	if httpsLn != nil {
		host, httpPort := splitAddr(httpLn.Addr())
		_, httpsPort := splitAddr(httpsLn.Addr())
		certs, err = newCertificates(ctx, cfg.TLS, cfg.DataDir, proxy, log, host, httpPort, httpsPort, changed)
		if err != nil {
			return err
		}
		proxy.hasCertificate = certs.hasPublicCertificate
		httpHandler = certs.httpHandler(httpHandler)
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

	feeder := &Feeder{Source: cfg.Source, StatePath: filepath.Join(cfg.DataDir, "routes.json"), Apply: apply, Log: log}
	if err := feeder.init(); err != nil {
		return err
	}
	// Restored before any listener serves: a restart never answers 404
	// for routes the stored table holds.
	go feeder.RunFrom(ctx, feeder.Restore())
	go reportCertificates(ctx, feeder, proxy, certs, changed)

	errc := make(chan error, 6)
	var servers []*http.Server
	var fastServers []*fasthttp.Server
	serve := func(ln net.Listener, serve func(net.Listener) error) {
		go func() {
			if err := serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("gateway listener %s: %w", ln.Addr(), err)
			}
		}()
	}
	newServer := func(h http.Handler, tlsCfg *tls.Config) *http.Server {
		srv := &http.Server{
			Handler:           h,
			TLSConfig:         tlsCfg,
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       2 * time.Minute,
			// No write timeout: streams and websockets stay open as long
			// as the application keeps them open.
			ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		}
		servers = append(servers, srv)
		return srv
	}
	start := func(ln net.Listener, h http.Handler, tlsCfg *tls.Config) string {
		if ln == nil {
			return ""
		}
		srv := newServer(h, tlsCfg)
		if tlsCfg != nil {
			serve(ln, func(ln net.Listener) error { return srv.ServeTLS(ln, "", "") })
		} else {
			serve(ln, srv.Serve)
		}
		return ln.Addr().String()
	}
	// startFast serves a plain-HTTP listener with the event loops (see
	// loop.go), which hand connections over to fasthttp, which hands them
	// over to a net/http server with h (see fast.go). Without event loops
	// (not on Linux) fasthttp serves the listener.
	loops := newLoopServer(proxy, log)
	var startErr error
	startFast := func(ln net.Listener, l Listener, h http.Handler) string {
		if ln == nil {
			return ""
		}
		handoff := newHandoff(ln.Addr())
		serve(handoff, newServer(h, nil).Serve)
		acme := l == ListenerHTTP && certs != nil && certs.issuer != nil
		fs := proxy.newFastServer(l, handoff, acme)
		fastServers = append(fastServers, fs)
		if loops == nil {
			serve(ln, fs.Serve)
			return ln.Addr().String()
		}
		fromLoops := newHandoff(ln.Addr())
		serve(fromLoops, fs.Serve)
		if err := loops.add(ln, l, acme, fromLoops); err != nil {
			if startErr == nil {
				startErr = err
			}
		} else {
			// The loops accept on a duplicate of the socket, which they
			// close when they stop: from then on connections are refused.
			ln.Close()
		}
		return ln.Addr().String()
	}
	addrs := Addrs{
		HTTP:    startFast(httpLn, ListenerHTTP, httpHandler),
		HTTPS:   start(httpsLn, proxy.Handler(ListenerHTTPS), tlsCfg),
		Private: startFast(privateLn, ListenerPrivate, proxy.Handler(ListenerPrivate)),
	}
	if startErr == nil && loops != nil {
		startErr = loops.start()
	}
	if startErr != nil {
		return fmt.Errorf("gateway: %w", startErr)
	}
	if metricsLn != nil {
		addrs.Metrics = start(metricsLn, metricsHandler(cfg.Metrics, metricsToken), nil)
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
	shutdownCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	if loops != nil {
		loops.shutdown(shutdownCtx)
	}
	for _, fs := range fastServers {
		fs.ShutdownWithContext(shutdownCtx)
	}
	for _, srv := range servers {
		srv.Shutdown(shutdownCtx)
	}
	return err
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
