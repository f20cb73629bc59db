// Package keyring holds the key-encryption keys (KEKs) Slipway seals
// secret values with, and the sealing itself: AES-256-GCM with a random
// nonce and additional data that binds each ciphertext to the row it is
// stored in, so a ciphertext copied into another row (another team,
// application, name or version) does not open.
//
// Keys come from SLIPWAY_SECRET_KEY_FILE or SLIPWAY_SECRET_KEY (see Load).
// There is no default key: production commands refuse to start without one
// (secret_key_missing); only `slipway dev` creates one, in its data
// directory (LoadOrCreate). A keyring holds one current key, which seals,
// and any number of older keys, which only open, so a key can be rotated
// while rows sealed under the old one still exist (secrets.RotateKey
// re-seals them).
//
// Each key has an id, the first 8 hex digits of the SHA-256 of the key,
// stored beside every ciphertext so the right key is found without trying
// them all and a missing key is named in the error.
//
// It is pure: it must not import anything from Slipway.
package keyring
