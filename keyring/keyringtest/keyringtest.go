package keyringtest

import (
	"crypto/rand"
	"testing"

	"github.com/slipwayhq/slipway/keyring"
)

// New returns a keyring holding one random key.
func New(t testing.TB) *keyring.Keyring {
	t.Helper()
	raw := make([]byte, keyring.KeySize)
	_, _ = rand.Read(raw)
	k, err := keyring.NewKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	return keyring.New(k)
}
