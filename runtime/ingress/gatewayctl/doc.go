// Package gatewayctl creates and keeps running the slipway-gateway
// container through the Docker Engine API: a standalone container (not a
// Swarm service, so it never restarts when services change) on its own
// bridge network with the public ports published, the control plane's
// socket directory bind-mounted and a named data volume; it connects the
// gateway live to each environment's ingress overlay and builds the dev
// image FROM scratch from the running static slipway binary. A Supervisor
// checks the container on an interval and brings a removed or stopped one
// back, joined again to the routed overlays.
//
// It talks to Docker only through the Engine API client (no docker CLI,
// no shell) and must not import Postgres or the control plane.
package gatewayctl
