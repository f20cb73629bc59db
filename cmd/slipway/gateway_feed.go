package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"

	"github.com/docker/docker/client"

	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/gatewayfeed"
	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/pipeline"
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
	// with ingress.enabled = false (gatewayEnabled). envGateway=nodes
	// says the gateways run on the ingress nodes (gateway-agent): serve
	// keeps no container, and the worker joins none to the overlays (the
	// agents do) but gives routed services the addresses they report.
	envGateway   = "SLIPWAY_GATEWAY"
	gatewayNodes = "nodes"
)

// gatewayRoutes is the pipeline's routes hook: deployed routes in the
// store, and the gateway container joined to ingress overlays unless
// ingress.enabled is false (then routes are kept but nothing serves them).
func gatewayRoutes(st *store.Store, cli client.APIClient, logger *slog.Logger, enabled bool) pipeline.RoutesHook {
	if !enabled {
		return &pipeline.GatewayRoutes{Store: st, Gateway: noGateway{}}
	}
	// Every gateway reports what it serves to serve's feed (the one
	// serve runs, one an operator runs with SLIPWAY_GATEWAY=off, or those
	// of the ingress nodes), so a deployment's routes step waits for them.
	if os.Getenv(envGateway) == gatewayNodes {
		return &pipeline.GatewayRoutes{Store: st, Gateway: pipeline.NodeGateways{Store: st}, WaitLive: true}
	}
	return &pipeline.GatewayRoutes{Store: st, Gateway: gatewayctl.New(cli, logger, os.Getenv(envGatewayName)), WaitLive: true}
}

// noGateway is the gateway of an installation with ingress.enabled =
// false: there is none to join to overlays, and routed services get no
// proxy addresses.
type noGateway struct{}

func (noGateway) ConnectNetwork(context.Context, string) (string, error) { return "", nil }

func (noGateway) DisconnectNetwork(context.Context, string) error { return nil }

// startServeGatewayFeed serves the route table for a gateway on this host
// and keeps that gateway's container (superviseGateway), unless
// ingress.enabled is false. The gateway is optional for serve: a socket
// directory it cannot use is logged, not fatal, and leaves the container
// to whichever control plane serves the socket.
func startServeGatewayFeed(ctx context.Context, st *store.Store, kr *keyring.Keyring, cfg config.Config, logger *slog.Logger) {
	if !cfg.Ingress.Enabled {
		logger.Info("ingress.enabled is false: no gateway route feed")
		return
	}
	dir := envOr(envGatewaySocketDir, defaultGatewaySocketDir)
	if _, err := startConfiguredGatewayFeed(ctx, st, kr, dir, cfg, logger); err != nil {
		logger.Warn("gateway route feed disabled", "err", err)
		return
	}
	superviseGateway(ctx, st, cfg, dir, logger)
}

// startConfiguredGatewayFeed is the feed serve and dev run: the unix
// socket in dir and, with [ingress] feed_addr, TCP behind the gateway
// token (a token it cannot read leaves TCP off, logged). It returns the
// bound TCP address, nil without one.
func startConfiguredGatewayFeed(ctx context.Context, st *store.Store, kr *keyring.Keyring, dir string, cfg config.Config, logger *slog.Logger) (net.Addr, error) {
	return gatewayfeed.Start(ctx, st, kr, dir, serveGatewayFeedTCP(cfg, logger), logger)
}

// startDevGateway serves the route table on <data-dir>/gateway/gateway.sock
// (and on TCP as serve does, with [ingress] feed_addr) and keeps the
// gateway container as serve does (superviseGateway), from an image built
// out of this very binary unless [ingress] image is set. Without a
// reachable Docker, dev goes on without a gateway; with ingress.enabled
// false it starts neither.
func startDevGateway(ctx context.Context, st *store.Store, kr *keyring.Keyring, conf config.Config, dataDir string, out io.Writer, logger *slog.Logger) error {
	if !conf.Ingress.Enabled {
		fmt.Fprintln(out, "Ingress is off (ingress.enabled = false): routes are deployed but not served")
		return nil
	}
	dir := filepath.Join(dataDir, "gateway")
	feedAddr, err := startConfiguredGatewayFeed(ctx, st, kr, dir, conf, logger)
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
