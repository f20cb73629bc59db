// Package browser holds the dashboard's end-to-end tests: they start the
// real `slipway dev` binary and drive it in headless Chromium through
// chromedp, deploying on the real Swarm. Screenshots of each step go to
// test-artifacts/ at the repository root (git-ignored).
//
// It has no product code and must not be imported; it reaches Slipway only
// through its binary, its HTTP pages and Docker's labels.
package browser
