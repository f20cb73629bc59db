// Package outbound decides which addresses connections that tenants direct
// may reach, and makes that decision where the connection is made.
//
// A tenant names hosts: git remotes in manifests, image references, and
// any other URL a manifest or a team setting holds. The worker connecting
// there must not become a way into the host's own services, the cloud's
// metadata endpoint, the private networks around it or Docker's networks.
// A Policy refuses loopback, link-local (169.254.169.254 and
// fd00:ec2::254 included), private and unique-local, shared (CGNAT),
// multicast, unspecified and reserved addresses, the host's own addresses
// and Docker's networks, unless the operator allows a network
// ([security] allowed_outbound_networks) or, for slipway dev, loopback.
//
// The check runs in the dialer's Control function, on the address the
// socket is about to connect to, so a name that resolves to a public
// address when someone looks and to loopback when the connection is made
// (DNS rebinding) is still refused. CheckHost is the weaker, look-ahead
// check for connections someone else makes (the Docker daemon pulling an
// image); callers use it only where they cannot own the dial.
//
// It imports only the standard library; it must not import anything from
// Slipway.
package outbound
