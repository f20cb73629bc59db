// Package webhook is Slipway's GitHub webhook intake, mounted at
// /webhooks/github: it bounds the body (1 MiB), verifies
// X-Hub-Signature-256 in constant time before reading anything else,
// records the delivery (deduplicated by X-GitHub-Delivery) and inserts its
// River job in the same transaction, and answers 202. It never deploys or
// calls GitHub inline: the jobs (jobs/github_*.go) do.
//
// It exposes a plain http.Handler (Fiber mounts it through its adaptor). It
// imports store and jobs; it must not import the rest of app, views,
// runtime or cmd.
package webhook
