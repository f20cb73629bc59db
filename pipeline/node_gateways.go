package pipeline

import (
	"context"
	"strings"
	"time"

	"github.com/slipwayhq/slipway/routelive"
	"github.com/slipwayhq/slipway/store"
)

// JoinRequestTTL is how long a deployment's request that the gateways join
// its environment's network lasts when the deployment never sets its
// routes (it failed before): long enough for any rollout.
const JoinRequestTTL = time.Hour

// NodeGateways are the gateways of the ingress nodes (SLIPWAY_GATEWAY=nodes):
// the agent on each joins its gateway to an environment's ingress overlay
// while the route table routes there or lists the network (a deployment's
// request, JoinNetwork), leaves it otherwise, and reports the gateway's
// address there; nothing is joined from here. Routed services trust the
// addresses reported by the live gateways.
type NodeGateways struct {
	Store *store.Store
	// JoinBound bounds JoinNetwork's wait (routelive.DefaultWait when zero).
	JoinBound time.Duration
}

var _ GatewayJoiner = NodeGateways{}

// ConnectNetwork returns the addresses the gateways reported on network.
func (g NodeGateways) ConnectNetwork(ctx context.Context, network string) (string, error) {
	addrs, err := g.Store.GatewayAddresses(ctx, network, time.Now().Add(-routelive.StaleAfter))
	ips := make([]string, 0, len(addrs))
	for _, a := range addrs {
		ips = append(ips, a.Address)
	}
	return strings.Join(ips, ","), err
}

// DisconnectNetwork does nothing: an agent leaves a network once neither a
// route nor a request holds it.
func (NodeGateways) DisconnectNetwork(context.Context, string) error { return nil }

// JoinNetwork asks the gateways to join env's network (the route table
// lists it until the deployment sets its routes, or JoinRequestTTL) and
// waits until every live gateway reported its address there.
func (g NodeGateways) JoinNetwork(ctx context.Context, env store.Environment, network string) (string, error) {
	if err := g.Store.RequestGatewayNetwork(ctx, env.TeamID, env.ID, network, time.Now().Add(JoinRequestTTL)); err != nil {
		return "", err
	}
	ips, err := routelive.WaitGatewayAddresses(ctx, g.Store, network, g.JoinBound)
	return strings.Join(ips, ","), err
}
