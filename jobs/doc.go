// Package jobs holds Slipway's background work on River: the client
// construction shared by serve (insert only) and worker (insert and work),
// one file per job kind (args + worker), and the single Register function
// that wires every worker kind to its dependencies. Job args carry ids
// only and have a stable snake_case Kind.
//
// jobs joins the store with the runtime; it must not import app, views or
// cmd.
package jobs
