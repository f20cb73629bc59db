// Package github is Slipway's side of the GitHub App: configuration, the
// API client (App JWT → installation tokens through ghinstallation, calls
// through go-github with a configurable base URL for tests and GitHub
// Enterprise, bounded retries honouring Retry-After and rate-limit resets),
// the app manifest flow and install URL, signed single-use install states
// and their binding to a team, the one pull request comment per application
// (found by a hidden marker, rendered by the pure RenderComment) and commit
// statuses.
//
// Nothing here deploys anything or blocks a deployment: callers run GitHub
// calls in their own River jobs (jobs/github_*.go), so an outage only
// delays a comment.
//
// It may import store (install states, sealed credentials); it must not
// import app, pipeline, jobs, runtime, views or cmd. Its fake API lives in
// githubtest.
package github
