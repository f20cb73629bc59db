// Command testgateway runs the gateway exactly as `slipway gateway` does
// with its environment-only configuration. The gatewayctl tests build it
// when cmd/slipway, edited by many hands, does not compile at that moment.
// It imports only runtime/ingress and must stay out of product builds.
package main
