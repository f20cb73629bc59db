package keyring_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/keyring"
)

func newKeyText(t *testing.T) string {
	t.Helper()
	k, err := keyring.Generate()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func parse(t *testing.T, text string) *keyring.Keyring {
	t.Helper()
	kr, err := keyring.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var ke *keyring.Error
	if !errors.As(err, &ke) || ke.Code != code {
		t.Fatalf("error = %v, want code %s", err, code)
	}
}

func TestKeyring_SealOpen(t *testing.T) {
	t.Parallel()
	kr := parse(t, newKeyText(t))
	ad := keyring.AD("stored", "team_a", "app_a", "sec_a", "db-password", "1")
	plain := []byte("hunter2-correct-horse")

	s1, err := kr.Seal(plain, ad)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := kr.Seal(plain, ad)
	if err != nil {
		t.Fatal(err)
	}
	if s1.KeyID != kr.CurrentID() || len(s1.KeyID) != 8 {
		t.Fatalf("key id = %q, current %q", s1.KeyID, kr.CurrentID())
	}
	if bytes.Equal(s1.Nonce, s2.Nonce) || bytes.Equal(s1.Ciphertext, s2.Ciphertext) {
		t.Fatal("two seals of one value share a nonce or ciphertext")
	}
	if bytes.Contains(s1.Ciphertext, plain) {
		t.Fatal("ciphertext contains the plaintext")
	}
	got, err := kr.Open(s1, ad)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Open = %q, %v", got, err)
	}

	tests := []struct {
		name   string
		sealed keyring.Sealed
		ad     []byte
		code   string
	}{
		{"other row", s1, keyring.AD("stored", "team_a", "app_a", "sec_a", "db-password", "2"), keyring.CodeOpenFailed},
		{"other team", s1, keyring.AD("stored", "team_b", "app_a", "sec_a", "db-password", "1"), keyring.CodeOpenFailed},
		{"shifted fields", s1, keyring.AD("stored", "team_a", "app_as", "ec_a", "db-password", "1"), keyring.CodeOpenFailed},
		{"flipped bit", keyring.Sealed{KeyID: s1.KeyID, Nonce: s1.Nonce, Ciphertext: flip(s1.Ciphertext)}, ad, keyring.CodeOpenFailed},
		{"other nonce", keyring.Sealed{KeyID: s1.KeyID, Nonce: s2.Nonce, Ciphertext: s1.Ciphertext}, ad, keyring.CodeOpenFailed},
		{"short nonce", keyring.Sealed{KeyID: s1.KeyID, Nonce: s1.Nonce[:4], Ciphertext: s1.Ciphertext}, ad, keyring.CodeOpenFailed},
		{"unknown key id", keyring.Sealed{KeyID: "00000000", Nonce: s1.Nonce, Ciphertext: s1.Ciphertext}, ad, keyring.CodeKeyUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := kr.Open(tt.sealed, tt.ad)
			wantCode(t, err, tt.code)
		})
	}
}

func flip(b []byte) []byte {
	c := bytes.Clone(b)
	c[0] ^= 1
	return c
}

func TestKeyring_OtherKeyCannotOpen(t *testing.T) {
	t.Parallel()
	a, b := parse(t, newKeyText(t)), parse(t, newKeyText(t))
	ad := keyring.AD("x")
	s, err := a.Seal([]byte("v"), ad)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Open(s, ad)
	wantCode(t, err, keyring.CodeKeyUnknown)
	// Even relabelled with b's id, a's ciphertext does not open under b.
	s.KeyID = b.CurrentID()
	_, err = b.Open(s, ad)
	wantCode(t, err, keyring.CodeOpenFailed)
}

func TestParse_Formats(t *testing.T) {
	t.Parallel()
	raw := bytes.Repeat([]byte{0x9c}, 32)
	want := parse(t, hex.EncodeToString(raw)).CurrentID()
	tests := []struct {
		name string
		text []byte
	}{
		{"raw bytes", raw},
		{"hex with newline", []byte(hex.EncodeToString(raw) + "\n")},
		{"base64", []byte(base64.StdEncoding.EncodeToString(raw))},
		{"base64 unpadded", []byte(base64.RawStdEncoding.EncodeToString(raw))},
		{"base64url", []byte(base64.URLEncoding.EncodeToString(raw))},
		{"comments and blanks", []byte("# production key\n\n" + hex.EncodeToString(raw) + "\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kr, err := keyring.Parse(tt.text)
			if err != nil {
				t.Fatal(err)
			}
			if kr.CurrentID() != want {
				t.Fatalf("id = %s, want %s", kr.CurrentID(), want)
			}
		})
	}

	for _, bad := range []string{"", "# only a comment\n", "abcd", strings.Repeat("z", 64), hex.EncodeToString(raw[:16])} {
		_, err := keyring.Parse([]byte(bad))
		if err == nil {
			t.Fatalf("Parse(%q) accepted", bad)
		}
	}
}

func TestParse_OldKeys(t *testing.T) {
	t.Parallel()
	oldText, newText := newKeyText(t), newKeyText(t)
	old := parse(t, oldText)
	s, err := old.Seal([]byte("v"), nil)
	if err != nil {
		t.Fatal(err)
	}
	both := parse(t, newText+"\n"+oldText+"\n")
	if both.CurrentID() == old.CurrentID() {
		t.Fatal("the first key must be current")
	}
	if got, err := both.Open(s, nil); err != nil || string(got) != "v" {
		t.Fatalf("old key does not open: %q %v", got, err)
	}
	if len(both.IDs()) != 2 {
		t.Fatalf("IDs = %v", both.IDs())
	}
	// Commas work where newlines are awkward (an environment variable).
	if parse(t, newText+","+oldText).CurrentID() != both.CurrentID() {
		t.Fatal("comma-separated keys differ")
	}
}

func TestLoad_NoDefaultKey(t *testing.T) {
	t.Parallel()
	_, err := keyring.Load(keyring.Config{})
	wantCode(t, err, keyring.CodeKeyMissing)
	if !errors.Is(err, keyring.ErrKeyMissing) {
		t.Fatalf("errors.Is(%v, ErrKeyMissing) = false", err)
	}
	if !strings.Contains(err.Error(), keyring.EnvKeyFile) {
		t.Fatalf("error does not say how to fix it: %v", err)
	}
	env := keyring.ConfigFromEnv(func(string) string { return "" })
	if _, err := keyring.Load(env); !errors.Is(err, keyring.ErrKeyMissing) {
		t.Fatalf("empty environment: %v", err)
	}
	_, err = keyring.Load(keyring.Config{KeyFile: filepath.Join(t.TempDir(), "absent")})
	wantCode(t, err, keyring.CodeKeyMissing)
}

func TestLoad_FileWinsOverEnv(t *testing.T) {
	t.Parallel()
	fileKey, envKey := newKeyText(t), newKeyText(t)
	path := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(path, []byte(fileKey), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{keyring.EnvKeyFile: path, keyring.EnvKey: envKey}
	kr, err := keyring.Load(keyring.ConfigFromEnv(func(k string) string { return vars[k] }))
	if err != nil {
		t.Fatal(err)
	}
	if kr.CurrentID() != parse(t, fileKey).CurrentID() {
		t.Fatal("the key file must win over SLIPWAY_SECRET_KEY")
	}
	kr, err = keyring.Load(keyring.Config{Key: envKey})
	if err != nil || kr.CurrentID() != parse(t, envKey).CurrentID() {
		t.Fatalf("Load(Key) = %v", err)
	}
}

func TestLoadOrCreate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "data", "secret.key")
	first, err := keyring.LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode = %v, want 0600", fi.Mode().Perm())
	}
	again, err := keyring.LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	if again.CurrentID() != first.CurrentID() {
		t.Fatal("LoadOrCreate replaced an existing key")
	}
	other, err := keyring.LoadOrCreate(filepath.Join(t.TempDir(), "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	if other.CurrentID() == first.CurrentID() {
		t.Fatal("two data directories got the same key")
	}
}

func TestMerge(t *testing.T) {
	t.Parallel()
	oldKR, newKR := parse(t, newKeyText(t)), parse(t, newKeyText(t))
	s, err := oldKR.Seal([]byte("v"), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := keyring.Merge(newKR, oldKR)
	if m.CurrentID() != newKR.CurrentID() || len(m.IDs()) != 2 {
		t.Fatalf("merged: current %s, ids %v", m.CurrentID(), m.IDs())
	}
	if got, err := m.Open(s, nil); err != nil || string(got) != "v" {
		t.Fatalf("merged keyring does not open the old key's value: %v", err)
	}
	if _, err := newKR.Open(s, nil); err == nil {
		t.Fatal("Merge changed its primary keyring")
	}
}
