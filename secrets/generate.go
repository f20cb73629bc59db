package secrets

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"fmt"

	"github.com/slipwayhq/slipway/manifest"
)

// Generate returns a new value for a declaration: random bytes from the
// operating system as lowercase hex (the default) or unpadded base64url,
// or an RSA private key in PKCS#8 PEM. The manifest validator refuses bad
// declarations first; this checks again, since a value generated from a
// wrong one would be kept forever.
func Generate(g manifest.Generate) ([]byte, error) {
	switch g.Type {
	case manifest.GenerateRandom:
		n := g.Bytes
		if n < manifest.MinRandomSecretBytes || n > manifest.MaxRandomSecretBytes {
			return nil, refuse(CodeGenerateInvalid, "generate.bytes", nil, "random secrets are %d-%d bytes, got %d",
				manifest.MinRandomSecretBytes, manifest.MaxRandomSecretBytes, n)
		}
		raw := make([]byte, n)
		if _, err := rand.Read(raw); err != nil {
			return nil, fmt.Errorf("generate random secret: %w", err)
		}
		switch g.Encoding {
		case "", manifest.EncodingHex:
			return []byte(hex.EncodeToString(raw)), nil
		case manifest.EncodingBase64URL:
			return []byte(base64.RawURLEncoding.EncodeToString(raw)), nil
		}
		return nil, refuse(CodeGenerateInvalid, "generate.encoding", nil, "encoding is %q or %q, got %q", manifest.EncodingHex, manifest.EncodingBase64URL, g.Encoding)
	case manifest.GenerateRSA:
		switch g.Bits {
		case 2048, 3072, 4096:
		default:
			return nil, refuse(CodeGenerateInvalid, "generate.bits", nil, "RSA keys are 2048, 3072 or 4096 bits, got %d", g.Bits)
		}
		key, err := rsa.GenerateKey(rand.Reader, g.Bits)
		if err != nil {
			return nil, fmt.Errorf("generate RSA key: %w", err)
		}
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return nil, fmt.Errorf("encode RSA key: %w", err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
	}
	return nil, refuse(CodeGenerateInvalid, "generate.type", nil, "type is %q or %q, got %q", manifest.GenerateRandom, manifest.GenerateRSA, g.Type)
}
