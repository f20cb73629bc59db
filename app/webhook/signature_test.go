package webhook_test

import (
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/app/webhook"
)

func TestVerifySignature(t *testing.T) {
	t.Parallel()
	secret, body := []byte("s"), []byte(`{"a":1}`)
	good := webhook.SignatureHeader(secret, body)
	tests := []struct {
		name   string
		secret []byte
		header string
		want   bool
	}{
		{"valid", secret, good, true},
		{"uppercase hex", secret, "sha256=" + strings.ToUpper(strings.TrimPrefix(good, "sha256=")), true},
		{"empty secret", nil, webhook.SignatureHeader(nil, body), false},
		{"empty header", secret, "", false},
		{"no prefix", secret, strings.TrimPrefix(good, "sha256="), false},
		{"wrong secret", []byte("t"), good, false},
		{"extra byte", secret, good + "0", false},
	}
	for _, tt := range tests {
		if got := webhook.VerifySignature(tt.secret, body, tt.header); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

// FuzzVerifySignature: the verifier never panics, accepts the signature
// GitHub would send, and accepts nothing else for that body (any header it
// accepts is that signature, up to hex case).
func FuzzVerifySignature(f *testing.F) {
	f.Add([]byte("secret"), []byte(`{"action":"opened"}`), "sha256=00")
	f.Add([]byte("secret"), []byte{}, "sha256="+strings.Repeat("ab", 32))
	f.Add([]byte{}, []byte("x"), "")
	f.Fuzz(func(t *testing.T, secret, body []byte, header string) {
		ok := webhook.VerifySignature(secret, body, header)
		want := webhook.SignatureHeader(secret, body)
		if ok && !strings.EqualFold(header, want) {
			t.Fatalf("accepted %q for a body whose signature is %q", header, want)
		}
		if len(secret) > 0 && !webhook.VerifySignature(secret, body, want) {
			t.Fatalf("rejected the genuine signature %q", want)
		}
		if len(secret) == 0 && ok {
			t.Fatal("an empty secret verified a signature")
		}
	})
}
