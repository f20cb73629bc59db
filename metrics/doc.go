// Package metrics holds Slipway's Prometheus collectors and the /metrics
// handler. Other packages call its methods to record what happened
// (ObserveDeployment, ObserveJob, ObserveGatewayRequest, DriftRepaired,
// ObserveWebhookDelivery); River's queue depth is read at scrape time
// through a function the caller supplies, so this package needs no database.
//
// Every method works on a nil *Registry and does nothing, so code and tests
// that run without metrics need no special case.
//
// It must not import other packages of this module, Postgres or Docker: the
// gateway process, which has neither, records its requests here too.
package metrics
