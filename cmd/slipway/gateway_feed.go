package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/docker/docker/client"

	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/runtime/ingress"
	"github.com/slipwayhq/slipway/runtime/ingress/gatewayctl"
	"github.com/slipwayhq/slipway/store"
)

// Environment variables of the control plane's side of the gateway.
const (
	// envGatewaySocketDir is where serve puts gateway.sock (dev uses
	// <data-dir>/gateway).
	envGatewaySocketDir     = "SLIPWAY_GATEWAY_SOCKET_DIR"
	defaultGatewaySocketDir = "/var/run/slipway"
	// envGatewayName names the gateway container (default slipway-gateway);
	// tests run their own.
	envGatewayName = "SLIPWAY_GATEWAY_NAME"
	// envGateway=off keeps serve and dev from managing the container (an
	// operator runs the gateway elsewhere); the route feed stays, unlike
	// with ingress.enabled = false (gatewayEnabled).
	envGateway = "SLIPWAY_GATEWAY"

	gatewaySocketName   = "gateway.sock"
	gatewayPollInterval = time.Second
)

// gatewayRoutes is the pipeline's routes hook: deployed routes in the
// store, and the gateway container joined to ingress overlays unless
// ingress.enabled is false (then routes are kept but nothing serves them).
func gatewayRoutes(st *store.Store, cli client.APIClient, logger *slog.Logger, enabled bool) pipeline.RoutesHook {
	if !enabled {
		return &pipeline.GatewayRoutes{Store: st, Gateway: noGateway{}}
	}
	return &pipeline.GatewayRoutes{Store: st, Gateway: gatewayctl.New(cli, logger, os.Getenv(envGatewayName))}
}

// noGateway is the gateway of an installation with ingress.enabled =
// false: there is none to join to overlays, and routed services get no
// proxy addresses.
type noGateway struct{}

func (noGateway) ConnectNetwork(context.Context, string) (string, error) { return "", nil }
func (noGateway) DisconnectNetwork(context.Context, string) error        { return nil }

// startServeGatewayFeed serves the route table for a gateway on this host
// and keeps that gateway's container (superviseGateway), unless
// ingress.enabled is false. The gateway is optional for serve: a socket
// directory it cannot use is logged, not fatal, and leaves the container
// to whichever control plane serves the socket.
func startServeGatewayFeed(ctx context.Context, st *store.Store, cfg config.Config, logger *slog.Logger) {
	if !cfg.Ingress.Enabled {
		logger.Info("ingress.enabled is false: no gateway route feed")
		return
	}
	dir := envOr(envGatewaySocketDir, defaultGatewaySocketDir)
	if _, err := startConfiguredGatewayFeed(ctx, st, dir, cfg, logger); err != nil {
		logger.Warn("gateway route feed disabled", "err", err)
		return
	}
	superviseGateway(ctx, st, cfg, dir, logger)
}

// startConfiguredGatewayFeed is the feed serve and dev run: the unix
// socket in dir and, with [ingress] feed_addr, TCP behind the gateway
// token (a token it cannot read leaves TCP off, logged). It returns the
// bound TCP address, nil without one.
func startConfiguredGatewayFeed(ctx context.Context, st *store.Store, dir string, cfg config.Config, logger *slog.Logger) (net.Addr, error) {
	return startGatewayFeedWith(ctx, st, dir, serveGatewayFeedTCP(cfg, logger), logger)
}

// startDevGateway serves the route table on <data-dir>/gateway/gateway.sock
// (and on TCP as serve does, with [ingress] feed_addr) and keeps the
// gateway container as serve does (superviseGateway), from an image built
// out of this very binary unless [ingress] image is set. Without a
// reachable Docker, dev goes on without a gateway; with ingress.enabled
// false it starts neither.
func startDevGateway(ctx context.Context, st *store.Store, conf config.Config, dataDir string, out io.Writer, logger *slog.Logger) error {
	if !conf.Ingress.Enabled {
		fmt.Fprintln(out, "Ingress is off (ingress.enabled = false): routes are deployed but not served")
		return nil
	}
	dir := filepath.Join(dataDir, "gateway")
	feedAddr, err := startConfiguredGatewayFeed(ctx, st, dir, conf, logger)
	if err != nil {
		return err
	}
	if feedAddr != nil {
		fmt.Fprintf(out, "Gateway route feed also on http://%s (gateway token required)\n", feedAddr)
	}
	cfg, running := superviseGateway(ctx, st, conf, dir, logger)
	if !running {
		return nil
	}
	fmt.Fprintf(out, "Gateway listening on http://127.0.0.1:%d", cfg.HTTPPort)
	if cfg.HTTPSPort > 0 {
		fmt.Fprintf(out, " and https://127.0.0.1:%d", cfg.HTTPSPort)
	}
	fmt.Fprintln(out)
	if cfg.MetricsAddr != "" {
		fmt.Fprintf(out, "Gateway metrics on http://%s/metrics (bearer token from %s)\n", cfg.MetricsAddr, cfg.MetricsTokenFile)
	}
	return nil
}

// startGatewayFeed listens on <dir>/gateway.sock and serves the route
// table there (ingress.RoutesPath, long-poll), republishing whenever the
// store's version moves, and takes the gateway's certificate reports
// (ingress.CertificatesPath) into the store, until ctx ends.
func startGatewayFeed(ctx context.Context, st *store.Store, dir string, logger *slog.Logger) error {
	_, err := startGatewayFeedWith(ctx, st, dir, gatewayFeedTCP{}, logger)
	return err
}

// startGatewayFeedWith is startGatewayFeed that also serves the feed on
// TCP behind the gateway token when tcp.Addr is set, for gateways on other
// nodes; it returns the bound TCP address (nil without one).
func startGatewayFeedWith(ctx context.Context, st *store.Store, dir string, tcp gatewayFeedTCP, logger *slog.Logger) (net.Addr, error) {
	// Only the control plane and the gateway (root in its container) may
	// reach the socket: it hands out every team's routes.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("gateway socket directory %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("gateway socket directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, gatewaySocketName)
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return nil, fmt.Errorf("gateway socket %s: another control plane is serving it (gateway_socket_in_use)", path)
	}
	// A socket left by a control plane that did not stop cleanly.
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("gateway socket %s: %w", path, err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("gateway socket %s: %w", path, err)
	}
	pub := ingress.NewPublisher()
	mux := http.NewServeMux()
	mux.Handle(ingress.RoutesPath, pub)
	mux.Handle(ingress.CertificatesPath, ingress.CertificateReceiver(func(ctx context.Context, r ingress.CertificateReport) error {
		return storeCertificateReport(ctx, st, r)
	}))
	var tcpAddr net.Addr
	if tcp.Addr != "" {
		tcpLn, err := listenGatewayFeedTCP(tcp)
		if err != nil {
			ln.Close()
			return nil, err
		}
		tcpAddr = tcpLn.Addr()
		serveGatewayFeed(ctx, tcpLn, ingress.RequireToken(tcp.Token, mux), logger)
	}
	serveGatewayFeed(ctx, ln, mux, logger)
	go func() {
		<-ctx.Done()
		_ = os.Remove(path)
	}()
	go feedRoutes(ctx, st, pub, logger)
	logger.Info("gateway route feed listening", "socket", path, "tcp", tcpAddr)
	return tcpAddr, nil
}

// serveGatewayFeed serves h on ln until ctx ends.
func serveGatewayFeed(ctx context.Context, ln net.Listener, h http.Handler, logger *slog.Logger) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("gateway route feed stopped", "addr", ln.Addr(), "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		// Long-polls would hold Shutdown for their whole wait.
		_ = srv.Close()
	}()
}

// feedRoutes publishes the route table once at start (even empty: gateways
// get 503 until then) and again whenever its version changes.
func feedRoutes(ctx context.Context, st *store.Store, pub *ingress.Publisher, logger *slog.Logger) {
	published := int64(-1)
	t := time.NewTicker(gatewayPollInterval)
	defer t.Stop()
	for {
		v, err := st.RouteTableVersion(ctx)
		if err == nil && v != published {
			var table ingress.Table
			if table, err = loadRouteTable(ctx, st, logger); err == nil {
				pub.Publish(table)
				published = table.Version
				logger.Debug("published route table", "version", table.Version, "routes", len(table.Routes))
			}
		}
		if err != nil && ctx.Err() == nil {
			logger.Warn("read route table", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// loadRouteTable converts the store's routes into the gateway's table. A
// route the gateway would refuse is left out and logged, because the
// gateway refuses a whole table for one bad route.
func loadRouteTable(ctx context.Context, st *store.Store, logger *slog.Logger) (ingress.Table, error) {
	version, routes, err := st.RouteTable(ctx)
	if err != nil {
		return ingress.Table{}, err
	}
	table := ingress.Table{Version: version, Routes: make([]ingress.Route, 0, len(routes))}
	for _, r := range routes {
		ir := ingressRoute(r)
		if err := (ingress.Table{Routes: []ingress.Route{ir}}).Validate(); err != nil {
			logger.Error("route left out of the gateway table", "hostname", r.Hostname, "environment", r.EnvironmentID, "err", err)
			continue
		}
		table.Routes = append(table.Routes, ir)
	}
	return table, nil
}

func ingressRoute(r store.DeployedRoute) ingress.Route {
	ir := ingress.Route{
		Hostname: r.Hostname, Visibility: ingress.Visibility(r.Visibility),
		TeamID: r.TeamID, AppID: r.ApplicationID, EnvID: r.EnvironmentID,
	}
	if r.RedirectTo != "" {
		ir.Redirect = &ingress.Redirect{To: r.RedirectTo, Status: r.RedirectStatus, PreservePath: r.PreservePath}
	} else {
		ir.Backend = &ingress.Backend{Service: r.BackendService, Port: r.BackendPort, Network: r.BackendNetwork}
	}
	return ir
}

// storeCertificateReport keeps the gateway's certificate state of every
// routed hostname for the API, the CLI and the dashboard.
func storeCertificateReport(ctx context.Context, st *store.Store, r ingress.CertificateReport) error {
	certs := make([]store.RouteCertificate, 0, len(r.Certificates))
	for _, c := range r.Certificates {
		certs = append(certs, store.RouteCertificate{Hostname: c.Hostname, State: string(c.State), ExpiresAt: c.ExpiresAt, LastError: c.LastError})
	}
	return st.ReportRouteCertificates(ctx, certs)
}
