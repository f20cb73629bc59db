package main

import (
	"os"

	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
)

// loadSecretKey loads the key-encryption key the way the worker does, with
// no fallback: serve refuses to start without one rather than accept
// secret values it could not seal.
func loadSecretKey() (*keyring.Keyring, error) {
	return keyring.Load(keyring.ConfigFromEnv(os.Getenv))
}

// newSecretService is the keyring-backed secret store over st.
func newSecretService(st *store.Store) (*secrets.Service, error) {
	kr, err := loadSecretKey()
	if err != nil {
		return nil, err
	}
	return secrets.New(st, kr), nil
}
