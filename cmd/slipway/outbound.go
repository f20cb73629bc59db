package main

import (
	"context"
	"net/netip"

	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/outbound"
	"github.com/slipwayhq/slipway/runtime/docker"
	"github.com/slipwayhq/slipway/runtime/swarm"
)

// outboundPolicy is the policy connections that tenants direct are
// checked against in this process: [security] allowed_outbound_networks
// (slipway dev adds loopback, see devConfig), and this host's addresses
// and Docker's networks refused, read afresh every outbound.LocalTTL.
// The configuration was validated, so every CIDR parses.
func outboundPolicy(cfg config.Config) *outbound.Policy {
	var allowed []netip.Prefix
	for _, s := range cfg.Security.AllowedOutboundNetworks {
		if p, err := netip.ParsePrefix(s); err == nil {
			allowed = append(allowed, p.Masked())
		}
	}
	return outbound.New(outbound.Config{Allowed: allowed, Local: localNetworks})
}

// localNetworks is this host's interface addresses and, when Docker
// answers, its networks' subnets.
func localNetworks(ctx context.Context) ([]netip.Prefix, error) {
	out, err := outbound.HostAddresses()
	if err != nil {
		return nil, err
	}
	engine, err := swarm.NewEngine()
	if err != nil {
		return out, nil
	}
	defer engine.Close()
	if nets, err := docker.NetworkPrefixes(ctx, engine); err == nil {
		out = append(out, nets...)
	}
	return out, nil
}
