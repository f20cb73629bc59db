// Package scheduler runs scheduled jobs: Tick claims every schedule whose
// time has come (a scheduled job or a scheduled backup of an environment's
// current deployment) and queues one run of it, however many of its slots
// passed while no worker ran; Run runs one queued job run as a Swarm
// replicated job built from the environment's current deployment, applies
// the job's concurrency policy (forbid skips a run while the previous one
// runs, replace stops the previous one) and records its start, end, exit
// code and the last lines of its output; RunNow queues a run by hand.
//
// It joins the store, the pipeline (what an environment runs) and the
// Swarm driver. It must not import app, views, cmd or jobs: jobs runs it in
// River workers and implements its Queue.
package scheduler
