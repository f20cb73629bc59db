// Package proxyrig sets up the reverse proxies that test/desync and
// bench/gateway compare: the real gateway run as its own process (as
// `slipway gateway` runs in its container, configured by environment) fed
// by a real route Publisher over a unix socket, nginx as the reference
// proxy with a configuration of its own in a temporary directory, and one
// ECDSA P-256 certificate both serve.
//
// It is for tests and benchmarks only. It uses the gateway's exported
// contract (runtime/ingress: Table, Publisher, the SLIPWAY_GATEWAY_*
// variables) and nothing of its internals, and must not be imported by
// product code.
package proxyrig
