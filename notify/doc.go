// Package notify tells a team's destinations (a generic webhook, Slack,
// Discord, e-mail) what happened to its applications.
//
//   - event.go: the event kinds (deployment failed, succeeded, rolled back;
//     preview ready, failed; service unhealthy, recovered; certificate
//     failed, expiring; scheduled job and backup failed) and Event, what
//     a message says: application, environment, deployment, a link, never
//     a secret value.
//   - emit.go: Emitter.Emit, which whoever sees an event calls inside the
//     transaction that records it. It records one delivery per destination
//     that chose the event (deduplicated by the event's key) and queues
//     each through Enqueue, which package jobs implements with River.
//   - destination.go, service.go: destinations as people write them,
//     validated (each error names its field and a code), their
//     credentials (URL, signing key, SMTP password) sealed with the
//     keyring and never returned.
//   - message.go, deliver.go: the message of each kind and the delivery
//     of one, through package notify/send, recorded with its outcome.
//
// Connections go through the Dial function the caller gives (the
// outbound-address check of tenant-directed connections); nil dials
// nothing and fails closed.
//
// It imports store, keyring and notify/send; it must not import app,
// jobs, pipeline, runtime, views or cmd.
package notify
