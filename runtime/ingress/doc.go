// Package ingress is the Slipway gateway: the route table and its JSON wire
// format, the hostname matcher, the reverse proxy — epoll event loops on
// the plain-HTTP listeners for the common request (loop.go,
// loopproxy.go), one net/http server for HTTPS (HTTP/1.1 and HTTP/2) and
// for every connection a loop hands over (server.go, handler.go,
// transport.go), a strict gate in front of net/http's HTTP/1 reading
// (gate.go), all sharing one forwarding core (forward.go) and one backend
// pool per task (pool.go, upstream.go) — the long-poll feed between the
// control plane (Publisher) and the gateway (Feeder), TLS through
// certmagic, and the state report the gateway sends back to the control
// plane (CertificateReport: certificates, and which routes it can serve,
// liveness.go).
//
// It runs inside the slipway-gateway container, so it must not import
// Postgres, the store, or anything of the control plane; the control plane
// imports this package for the types and the Publisher instead.
package ingress
