package main

import (
	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
)

// loadSecretKey loads the configured key-encryption key the way the worker
// does, with no fallback: serve refuses to start without one rather than
// accept secret values it could not seal.
func loadSecretKey(cfg config.Config) (*keyring.Keyring, error) {
	return keyring.Load(keyringConfig(cfg))
}

// newSecretService is the keyring-backed secret store over st.
func newSecretService(st *store.Store, cfg config.Config) (*secrets.Service, error) {
	kr, err := loadSecretKey(cfg)
	if err != nil {
		return nil, err
	}
	return secrets.New(st, kr), nil
}
