package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"strings"
)

// Prefixes make a leaked secret recognisable (and greppable by secret
// scanners) and tell the server what kind of secret it was handed.
const (
	TokenPrefix      = "slw_"  // API tokens
	InvitationPrefix = "slwi_" // invitation links
	SetupPrefix      = "slws_" // the one-time setup token of a fresh installation
)

// NewSecret returns 32 random bytes, URL-safe base64, after prefix.
func NewSecret(prefix string) string {
	b := make([]byte, 32)
	// crypto/rand.Read never returns an error on Linux since Go 1.24; it
	// panics instead if the kernel cannot supply randomness.
	_, _ = rand.Read(b)
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// EqualSecret compares two secrets in constant time.
func EqualSecret(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// HasPrefix reports whether s looks like a secret of the given kind.
func HasPrefix(s, prefix string) bool { return strings.HasPrefix(s, prefix) && len(s) > len(prefix) }
