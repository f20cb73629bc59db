// Package pipeline is Slipway's deployment pipeline: the state machine
// that advances one deployment from requested to succeeded or failed, and
// the work that shares its steps (drift repair, environment teardown,
// preview deletion, links between applications, the gateway's routes).
//
// Every step records its progress on the deployment (progress.go), so a
// retry, or another worker after a crash, resumes where it stopped without
// doing a succeeded step twice. One file per step, in the order Advance
// runs them (run.go):
//
//   - capture.go: pin what the deployment runs (the saved revision
//     rendered for the environment, a restored deployment, or a promoted
//     release); fetch.go and snapshot.go read repository-backed manifests;
//     preview_bounds.go bounds previews.
//   - prepare.go: resolve images, check out and build git sources.
//   - desired.go: the Swarm objects that should run, with the pinned
//     secrets, links and telemetry socket (telemetry.go), and the networks,
//     volumes, configs and secrets they need.
//   - jobs.go: before-rollout jobs, once each, after their dependencies.
//   - rollout.go: services in dependency order, then routes (routes.go).
//   - cleanup.go: remove what the deployment no longer has.
//   - rollback.go: record a failure and follow the rollback policy.
//   - notify.go: the outcome's notification (notify.Event), emitted in
//     the transaction that records it.
//
// Failures that end a deployment are *Failure, each with one snake_case
// code (failure.go); other errors are retried.
//
// The pipeline knows no job queue: package jobs runs it in River workers,
// turns *WaitError and *PermanentError into River's snooze and cancel, and
// implements Queue, through which the pipeline inserts the work that
// follows a change in the change's own transaction.
//
// pipeline joins the store with the runtime. It must not import app,
// views, cmd or jobs. Its test kit is pipelinetest.
package pipeline
