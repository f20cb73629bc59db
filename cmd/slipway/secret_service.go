package main

import (
	"os"

	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
)

// newSecretService loads the key-encryption key the way the worker does,
// with no fallback: serve refuses to start without one rather than accept
// secret values it could not seal.
func newSecretService(st *store.Store) (*secrets.Service, error) {
	kr, err := keyring.Load(keyring.ConfigFromEnv(os.Getenv))
	if err != nil {
		return nil, err
	}
	return secrets.New(st, kr), nil
}
