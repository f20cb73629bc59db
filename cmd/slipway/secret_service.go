package main

import (
	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/keyring"
)

// loadSecretKey loads the configured key-encryption key the way the worker
// does, with no fallback: serve refuses to start without one rather than
// accept secret values it could not seal.
func loadSecretKey(cfg config.Config) (*keyring.Keyring, error) {
	return keyring.Load(keyringConfig(cfg))
}
