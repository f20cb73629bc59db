package main

import (
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/gatewayfeed"
	"github.com/slipwayhq/slipway/keyring/keyringtest"

	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/runtime/ingress"
	"github.com/slipwayhq/slipway/store/storetest"
)

// TestDevGateway_FeedOnTCP: with [ingress] feed_addr and
// gateway_token_file, slipway dev serves the route feed on TCP behind the
// token, as serve does, besides its unix socket. Not parallel: it sets
// SLIPWAY_GATEWAY=off so no container is started.
func TestDevGateway_FeedOnTCP(t *testing.T) {
	t.Setenv(envGateway, "off")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := storetest.NewSchema(t)
	const host = "dev-feed.example.com"
	_, dir := newFeedFixture(t, st, "devfeed", host, 8080)
	const token = "dev-gw-token-0123456789"
	tokenFile := writeTokenFile(t, dir, "gateway", token)
	cfg := config.Default()
	cfg.Ingress.FeedAddr, cfg.Ingress.GatewayTokenFile = "127.0.0.1:0", tokenFile
	var out strings.Builder
	if err := startDevGateway(ctx, st, keyringtest.New(t), cfg, filepath.Join(dir, "data"), &out, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if !fileExists(filepath.Join(dir, "data", "gateway", gatewayfeed.SocketName)) {
		t.Error("dev no longer serves the unix socket")
	}
	m := regexp.MustCompile(`route feed also on (http://\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("dev does not report the TCP feed: %q", out.String())
	}
	routes := func(token string) (int, string) { return getWithBearer(t, m[1]+ingress.RoutesPath, token) }
	if status, body := routes(token); status != http.StatusOK || !strings.Contains(body, host) {
		t.Fatalf("routes with the token: %d %q", status, body)
	}
	if status, body := routes("wrong"); status != http.StatusUnauthorized || strings.Contains(body, host) {
		t.Fatalf("routes with a wrong token: %d %q", status, body)
	}

	// Without feed_addr, dev serves the socket only, as before.
	var plain strings.Builder
	if err := startDevGateway(ctx, st, keyringtest.New(t), config.Default(), filepath.Join(dir, "plain"), &plain, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "route feed also on") {
		t.Errorf("TCP feed without feed_addr: %q", plain.String())
	}
}

// TestGatewayContainerConfig_Metrics: [ingress] metrics_addr and
// metrics_token_file reach the gateway container dev creates.
func TestGatewayContainerConfig_Metrics(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	if gc := gatewayContainerConfig(cfg); gc.MetricsAddr != "" {
		t.Fatalf("default: %+v, want no metrics listener", gc)
	}
	cfg.Ingress.MetricsAddr, cfg.Ingress.MetricsTokenFile = "127.0.0.1:9100", "/etc/slipway/gw-metrics.token"
	gc := gatewayContainerConfig(cfg)
	if gc.MetricsAddr != "127.0.0.1:9100" || gc.MetricsTokenFile != "/etc/slipway/gw-metrics.token" {
		t.Fatalf("with metrics: %+v", gc)
	}
}
