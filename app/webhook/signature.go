package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// VerifySignature reports whether header (X-Hub-Signature-256:
// "sha256=<hex>") is the HMAC-SHA256 of body under secret. The comparison
// is constant-time; an empty secret verifies nothing.
func VerifySignature(secret, body []byte, header string) bool {
	if len(secret) == 0 {
		return false
	}
	hexMAC, ok := strings.CutPrefix(header, "sha256=")
	if !ok || len(hexMAC) != sha256.Size*2 {
		return false
	}
	got, err := hex.DecodeString(hexMAC)
	if err != nil {
		return false
	}
	return hmac.Equal(got, Sign(secret, body))
}

// Sign returns the HMAC-SHA256 of body under secret.
func Sign(secret, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return m.Sum(nil)
}

// SignatureHeader is the X-Hub-Signature-256 value GitHub sends for body.
func SignatureHeader(secret, body []byte) string {
	return "sha256=" + hex.EncodeToString(Sign(secret, body))
}
