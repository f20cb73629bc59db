// Package routelive tells the deployment pipeline when the gateways serve
// a deployment's routes, so that a deployment never reports success while
// the gateway still answers 404 for them: each gateway reports the route
// table version it serves and which of its routes it can serve (a
// redirect at once, a route once a connection to one of its backend's
// tasks was made), serve stores those reports (store.ReportGateway), and
// WaitRouteLive waits on them with a bound.
//
// It imports the store and nothing of Docker or the gateway itself; the
// pipeline calls it, nothing in the gateway does.
package routelive
