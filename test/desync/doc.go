// Package desync is the raw-socket proof that no request can desync the
// gateway (issue 18): smuggling through a body the proxy answered without
// reading, poisoning through a response a client dropped, spoofed
// forwarding headers, malformed heads, truncated responses, clients that
// stop reading, and slow or oversized bodies. Each class is one test of
// table cases, sent as bytes over TCP or TLS to the real gateway run as
// its own process, and to nginx in front of the same kind of backend where
// nginx is installed: nginx is the reference that shows each expectation
// is one a proxy can meet.
// The backends record exactly what reached them.
//
// It only has tests. It drives the gateway through its process boundary
// (test/proxyrig) and must not import runtime/ingress's internals; it must
// not be imported by anything.
package desync
