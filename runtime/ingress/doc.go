// Package ingress is the Slipway gateway: the route table and its JSON wire
// format, the hostname matcher, the reverse proxy — epoll event loops on
// the plain-HTTP listeners for the common request (loop.go,
// loopproxy.go), a goroutine HTTP/1 server for HTTPS and for every
// connection a loop hands over (conn.go), the gateway's own HTTP/2 server
// (internal/h2, with handler.go as its handler), all sharing one forwarding core (forward.go,
// relay.go) and one backend pool per task (pool.go, upstream.go,
// transport.go) — the long-poll feed between the
// control plane (Publisher) and the gateway (Feeder), TLS through
// certmagic with its storage shared by every gateway through the control
// plane (certstorage.go: StorageHandler, remoteStorage), and the state report the gateway sends back to the control
// plane (CertificateReport: certificates, and which routes it can serve,
// liveness.go).
//
// It runs inside the slipway-gateway container, so it must not import
// Postgres, the store, or anything of the control plane; the control plane
// imports this package for the types and the Publisher instead.
package ingress
