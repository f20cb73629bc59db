package main

import (
	"log/slog"

	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/gatewayfeed"
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
	return gatewayfeed.TCP{Addr: in.FeedAddr, Token: tok}, nil
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
