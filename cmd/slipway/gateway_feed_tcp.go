package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/slipwayhq/slipway/config"
)

// gatewayFeedTCP is the optional TCP listener of the route feed
// ([ingress] feed_addr), for gateways on other nodes, which cannot open
// the unix socket. Every request must carry the gateway token.
type gatewayFeedTCP struct {
	Addr  string
	Token string
}

// gatewayFeedTCPFromConfig reads [ingress] feed_addr and the gateway token.
func gatewayFeedTCPFromConfig(cfg config.Config) (gatewayFeedTCP, error) {
	in := cfg.Ingress
	if in.FeedAddr == "" {
		return gatewayFeedTCP{}, nil
	}
	tok, err := in.ReadGatewayToken()
	if err != nil {
		return gatewayFeedTCP{}, err
	}
	return gatewayFeedTCP{Addr: in.FeedAddr, Token: tok}, nil
}

// serveGatewayFeedTCP is serve's TCP feed; a token it cannot read leaves
// the TCP feed off (logged), the unix socket still serves.
func serveGatewayFeedTCP(cfg config.Config, logger *slog.Logger) gatewayFeedTCP {
	tcp, err := gatewayFeedTCPFromConfig(cfg)
	if err != nil {
		logger.Warn("gateway route feed: TCP listener off", "err", err)
		return gatewayFeedTCP{}
	}
	return tcp
}

func listenGatewayFeedTCP(tcp gatewayFeedTCP) (net.Listener, error) {
	if tcp.Token == "" {
		// RequireToken refuses everything without one; refuse to start
		// instead of listening for nothing.
		return nil, errors.New("ingress.feed_addr needs ingress.gateway_token_file (gateway_token_missing)")
	}
	ln, err := net.Listen("tcp", tcp.Addr)
	if err != nil {
		return nil, fmt.Errorf("ingress.feed_addr %s: %w", tcp.Addr, err)
	}
	return ln, nil
}
