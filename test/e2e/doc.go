// Package e2e holds end-to-end tests that run the real slipway binary
// (`slipway dev`) against the real Swarm and drive it only through its API
// and the gateway, as a user would. `make test` runs them. It holds no
// product code and nothing may import it.
package e2e
