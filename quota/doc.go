// Package quota holds each team's quotas: the limits (the daemon's
// defaults, which serve and worker store in Postgres, overridden per team
// by the operator), what a team uses of each, and the checks that refuse
// a change that would exceed one with quota_exceeded, naming the quota,
// its limit and the use. The checks run inside the transaction of the
// change, under a per-team lock, so two changes at once cannot both pass
// the last free unit; a change that does not add to an exceeded quota
// (the operator lowered it) is never refused.
//
// The two concurrency quotas (builds and deployments at once) are not
// refusals but turns: the pipeline waits while a team uses them all
// (store.AcquireDeploymentSlot, store.ClaimBuildSlot), so one team's
// burst leaves the workers to the others.
//
// It imports store and manifest; it must not import app, pipeline, jobs
// or runtime.
package quota
