package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/gatewayfeed"
	"github.com/slipwayhq/slipway/runtime/ingress/gatewayctl"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

// gatewaySuperviseInterval is how often serve and dev check the gateway
// container: a removed or stopped one is back within it.
const gatewaySuperviseInterval = 15 * time.Second

// superviseGateway is how serve and dev keep the gateway container: the
// one [ingress] describes (gatewayContainerConfig), fed from socketDir,
// created now and checked every gatewaySuperviseInterval until ctx ends,
// and rejoined to the ingress overlay of every environment with deployed
// routes whenever it had to be created again. Without [ingress] image
// the image is built from this very binary. It returns the container's
// configuration and whether the container runs now; a first check that
// failed is logged and retried, and SLIPWAY_GATEWAY=off, an unreachable Docker or
// an image it cannot build (logged) leave no container to keep.
func superviseGateway(ctx context.Context, st *store.Store, conf config.Config, socketDir string, logger *slog.Logger) (gatewayctl.Config, bool) {
	cfg := gatewayContainerConfig(conf)
	cfg.SocketDir, cfg.SocketName = socketDir, gatewayfeed.SocketName
	if !gatewayEnabled(conf) {
		logger.Info("not managing the gateway container", "reason", envGateway+"="+os.Getenv(envGateway))
		return cfg, false
	}
	cli, err := swarm.NewEngine()
	if err == nil {
		pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err = cli.Ping(pingCtx)
		cancel()
	}
	if err != nil {
		logger.Warn("Docker is unreachable: running without the gateway container", "err", err)
		return cfg, false
	}
	m := gatewayctl.New(cli, logger, os.Getenv(envGatewayName))
	sup := &gatewayctl.Supervisor{Manager: m, Config: cfg, Networks: st.RoutedIngressNetworks, Interval: gatewaySuperviseInterval}
	if cfg.Image == "" {
		// A binary that cannot become the image (not static) will not
		// become one later either: say so once and keep no container.
		built, err := m.BuildDevImage(ctx, "")
		if err != nil {
			logger.Warn("cannot build the gateway image from this binary (build it static with `make build`, or set [ingress] image): running without the gateway container", "err", err)
			return cfg, false
		}
		// The supervisor's first check takes the image just built; later
		// ones build it again only if it disappeared.
		sup.BuildImage = func(ctx context.Context) (string, error) {
			if img := built; img != "" {
				built = ""
				return img, nil
			}
			return m.BuildDevImage(ctx, "")
		}
	}
	id, err := sup.Start(ctx)
	if err != nil {
		logger.Warn("gateway container not ready yet; retrying", "every", gatewaySuperviseInterval, "err", err)
	}
	return cfg, id != ""
}
