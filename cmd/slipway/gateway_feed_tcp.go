package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	cerrdefs "github.com/containerd/errdefs"

	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/gatewayfeed"
	"github.com/slipwayhq/slipway/runtime/ingress/gatewayagent"
	"github.com/slipwayhq/slipway/runtime/swarm"
)

// gatewayFeedTCPFromConfig reads [ingress] feed_addr and the gateway token.
func gatewayFeedTCPFromConfig(cfg config.Config) (gatewayfeed.TCP, error) {
	in := cfg.Ingress
	if in.FeedAddr == "" {
		return gatewayfeed.TCP{}, nil
	}
	tok, err := in.ReadGatewayToken()
	if err != nil {
		return gatewayfeed.TCP{}, err
	}
	tcp := gatewayfeed.TCP{Addr: in.FeedAddr, Token: tok}
	// The gateways of the ingress nodes ask, when their agent stops,
	// whether their node is still one.
	if os.Getenv(envGateway) == gatewayNodes {
		tcp.IngressNode = ingressNode
	}
	return tcp, nil
}

// ingressNode reads whether the Swarm node id is labelled
// dev.slipway.ingress=true, through this host's engine (a manager's, as
// serve needs); a node gone from the Swarm is not.
func ingressNode(ctx context.Context, id string) (bool, error) {
	engine, err := swarm.NewEngine()
	if err != nil {
		return false, err
	}
	defer engine.Close()
	node, _, err := engine.NodeInspectWithRaw(ctx, id)
	if cerrdefs.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("inspect node %s: %w", id, err)
	}
	return node.Spec.Labels[gatewayagent.NodeLabel] == "true", nil
}

// serveGatewayFeedTCP is serve's TCP feed; a token it cannot read leaves
// the TCP feed off (logged), the unix socket still serves.
func serveGatewayFeedTCP(cfg config.Config, logger *slog.Logger) gatewayfeed.TCP {
	tcp, err := gatewayFeedTCPFromConfig(cfg)
	if err != nil {
		logger.Warn("gateway route feed: TCP listener off", "err", err)
		return gatewayfeed.TCP{}
	}
	return tcp
}
