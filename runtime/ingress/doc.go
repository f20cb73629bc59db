// Package ingress is the Slipway gateway: the route table and its JSON wire
// format, the hostname matcher, the reverse proxy with its backend pools
// (epoll event loops on the plain-HTTP listeners for the common request,
// fasthttp for the requests they hand over, net/http for TLS and HTTP/2
// and for the connections fasthttp hands over: upgrades, ACME challenges),
// the long-poll feed between the control plane (Publisher) and the gateway
// (Feeder), TLS through certmagic, and the certificate state report the
// gateway sends back to the control plane (CertificateReport).
//
// It runs inside the slipway-gateway container, so it must not import
// Postgres, the store, or anything of the control plane; the control plane
// imports this package for the types and the Publisher instead.
package ingress
