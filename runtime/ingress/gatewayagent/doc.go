// Package gatewayagent keeps the gateway of one ingress node. `slipway
// gateway-agent` runs it on every node labelled dev.slipway.ingress=true
// (a global Swarm service with that node's Docker socket): it keeps a
// slipway-gateway container on the node's own engine (gatewayctl), relays
// the gateway's control channel from a unix socket to serve's TCP route
// feed, adding the gateway token (the gateway container never holds it),
// joins the gateway live to the ingress overlay of every environment the
// route table routes to and leaves those it no longer routes to, and
// reports the gateway's address on each to serve, which routed services
// receive in SLIPWAY_INGRESS_PROXIES.
//
// A Swarm task's own container cannot join an overlay no task on its node
// uses (the engine answers "network not found"), while a standalone
// container can join any attachable overlay: hence a standalone gateway
// container kept by an agent, and no gateway service whose networks would
// change (and restart every gateway) with each environment.
//
// It talks to Docker only through the Engine API client and must not
// import Postgres, the store or the control plane (serve's side of the
// feed is gatewayfeed).
package gatewayagent
