// Package swarm is Slipway's Docker Swarm driver.
//
//   - Desired (pure) turns a rendered manifest and its environment context
//     into the Swarm objects that should exist: one overlay network per
//     environment (plus the ingress overlay for routed services), labelled
//     named volumes, content-named configs (files, the probe) and secrets,
//     services and job services. Golden JSON in testdata/ shows every change
//     to the generated specs in review (go test -update rewrites it).
//   - Driver.Observe lists what runs for an environment with a constant
//     number of Engine calls; Plan (pure) diffs observed against desired,
//     field by field, and refuses (name_conflict) to touch same-named
//     objects that lack Slipway's labels.
//   - The Driver's apply steps (EnsureNetworks, EnsureVolumes,
//     EnsureConfigs, EnsureSecrets, UpdateService, RunJob, WaitConverged,
//     StopService, RemoveService, RemoveEnvironment, RemoveVolumes) are
//     called one at a time by the deployment pipeline (pipeline/), which
//     persists progress between them; each is idempotent.
//
// A DesiredState carries secret values (Swarm needs them to create
// secrets): keep it in memory, never log or persist it; persist the
// rendered manifest and pinned versions instead and compute it again.
//
// Every failure the pipeline must act on is an *Error with a snake_case
// Code (docker_unavailable, name_conflict, rollout_failed, job_failed,
// job_timeout, ...).
//
// Engine is the narrow subset of the Docker client used here; NewEngine
// returns the real one. Tests use the real engine (swarmtest) for
// behaviour and a hand-written fake for call counting.
//
// This package must not import Postgres, store/, pipeline/, jobs/ or app/.
package swarm
