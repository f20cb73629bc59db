package docker

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/docker/docker/api/types/network"
)

// NetworkLister is the part of the client NetworkPrefixes reads.
type NetworkLister interface {
	NetworkList(ctx context.Context, options network.ListOptions) ([]network.Summary, error)
}

// NetworkPrefixes returns the subnets of every network the engine knows
// (bridges, the ingress and docker_gwbridge, every overlay), from their
// IPAM configuration.
func NetworkPrefixes(ctx context.Context, engine NetworkLister) ([]netip.Prefix, error) {
	nets, err := engine.NetworkList(ctx, network.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list docker networks: %w", err)
	}
	var out []netip.Prefix
	for _, n := range nets {
		for _, c := range n.IPAM.Config {
			if p, err := netip.ParsePrefix(c.Subnet); err == nil {
				out = append(out, p.Masked())
			}
		}
	}
	return out, nil
}
