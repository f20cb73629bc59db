// Package jobs holds Slipway's background work on River: the client
// construction shared by serve (insert only) and worker (insert and work),
// one file per job kind (args + worker), and the single Register function
// that wires every worker kind to its dependencies. Job args carry ids
// only and have a stable snake_case Kind.
//
// Workers stay thin: the deployment pipeline and the work that shares its
// steps (drift repair, teardown, preview deletion, links) live in package
// pipeline, which the deploy, reconcile, environment_teardown,
// preview_delete and links_reconcile workers call. Queue is the pipeline's
// way to insert jobs.
//
// jobs joins the store, the pipeline and the GitHub client; it must not
// import app, views or cmd.
package jobs
