// Package metrics holds Slipway's Prometheus collectors and the /metrics
// handler. Other packages record what happened through a *Registry
// (ObserveDeployment, ObserveGatewayRequest, DriftRepaired,
// ObserveWebhookDelivery); RiverMiddleware records every job attempt; River's
// queue depth is read at scrape time through a QueueDepthFunc the caller
// supplies, so this package needs no database.
//
// Every method works on a nil *Registry and does nothing, so code and tests
// that run without metrics need no special case.
//
// Handler serves the text format behind a bearer token; without a token it
// answers 404 (metrics off).
//
// It must not import other packages of this module, Postgres or Docker (only
// River's plain rivertype): the gateway process, which has neither, records
// its requests here too.
package metrics
