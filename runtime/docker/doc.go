// Package docker connects to the Docker Engine. It is the one place a
// client is built, so the Swarm driver, image builds, the gateway and the
// tests all speak to the engine the same way.
//
// NetworkPrefixes lists the engine's networks' subnets, which tenant
// connections must not reach (package outbound).
//
// It imports only the Docker client: it must not import store/,
// pipeline/, jobs/, app/ or the other runtime packages (they import it).
package docker
