package keyring

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Environment variables Load reads.
const (
	EnvKeyFile = "SLIPWAY_SECRET_KEY_FILE"
	EnvKey     = "SLIPWAY_SECRET_KEY"
)

// KeySize is the size of a key-encryption key: AES-256.
const KeySize = 32

// Error codes.
const (
	CodeKeyMissing = "secret_key_missing"
	CodeKeyInvalid = "secret_key_invalid"
	CodeKeyUnknown = "secret_key_unknown"
	CodeOpenFailed = "secret_decrypt_failed"
)

// Error is a keyring failure with a snake_case code.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// ErrKeyMissing is returned (wrapped in an *Error) when no key is
// configured; errors.Is(err, ErrKeyMissing) tells it apart.
var ErrKeyMissing = errors.New(CodeKeyMissing)

// Is makes errors.Is(err, ErrKeyMissing) true for a secret_key_missing Error.
func (e *Error) Is(target error) bool { return target == ErrKeyMissing && e.Code == CodeKeyMissing }

// Key is one key-encryption key. Its bytes never leave the package.
type Key struct {
	id   string
	aead cipher.AEAD
	// derive is the root of DeriveKey, itself derived so the raw bytes are
	// not kept.
	derive []byte
}

// ID is the key's id: the first 8 hex digits of SHA-256 of its bytes.
func (k *Key) ID() string { return k.id }

// NewKey builds a key from 32 bytes.
func NewKey(raw []byte) (*Key, error) {
	if len(raw) != KeySize {
		return nil, &Error{Code: CodeKeyInvalid, Message: fmt.Sprintf("a key is %d bytes, got %d", KeySize, len(raw))}
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("new key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("new key: %w", err)
	}
	sum := sha256.Sum256(raw)
	m := hmac.New(sha256.New, raw)
	m.Write([]byte("slipway/keyring/derive/v1"))
	return &Key{id: hex.EncodeToString(sum[:4]), aead: aead, derive: m.Sum(nil)}, nil
}

// DeriveKey returns a 32-byte key for purpose (such as signing GitHub
// install states), derived from the current key: stable while the current
// key is, and unrelated to the keys of other purposes.
func (kr *Keyring) DeriveKey(purpose string) []byte {
	m := hmac.New(sha256.New, kr.current.derive)
	m.Write([]byte(purpose))
	return m.Sum(nil)
}

// Keyring is a current key, which seals, and older keys, which only open.
// It is safe for concurrent use.
type Keyring struct {
	current *Key
	byID    map[string]*Key
}

// New returns a keyring sealing with current and opening with current and
// old. Duplicates (the same key twice) are ignored.
func New(current *Key, old ...*Key) *Keyring {
	kr := &Keyring{current: current, byID: map[string]*Key{current.id: current}}
	for _, k := range old {
		if _, dup := kr.byID[k.id]; !dup {
			kr.byID[k.id] = k
		}
	}
	return kr
}

// Merge returns a keyring sealing with primary's current key and opening
// with every key of primary and others: rotation to a new key file while
// the configured keys still open what they sealed.
func Merge(primary *Keyring, others ...*Keyring) *Keyring {
	kr := New(primary.current)
	for _, src := range append([]*Keyring{primary}, others...) {
		for id, k := range src.byID {
			if _, dup := kr.byID[id]; !dup {
				kr.byID[id] = k
			}
		}
	}
	return kr
}

// CurrentID is the id of the key new values are sealed with.
func (kr *Keyring) CurrentID() string { return kr.current.id }

// IDs lists every key id the keyring can open, the current one first.
func (kr *Keyring) IDs() []string {
	ids := []string{kr.current.id}
	for id := range kr.byID {
		if id != kr.current.id {
			ids = append(ids, id)
		}
	}
	return ids
}

// Sealed is a ciphertext as stored: the key id it was sealed under, the
// GCM nonce, and the ciphertext with its tag.
type Sealed struct {
	KeyID      string
	Nonce      []byte
	Ciphertext []byte
}

// Seal encrypts plaintext under the current key with a random nonce,
// authenticating ad (see AD) with it.
func (kr *Keyring) Seal(plaintext, ad []byte) (Sealed, error) {
	k := kr.current
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return Sealed{}, fmt.Errorf("seal: nonce: %w", err)
	}
	return Sealed{KeyID: k.id, Nonce: nonce, Ciphertext: k.aead.Seal(nil, nonce, plaintext, ad)}, nil
}

// Open decrypts s with the key it names. A key the keyring lacks is
// secret_key_unknown; a ciphertext that does not authenticate (tampered, or
// moved to another row so ad differs) is secret_decrypt_failed.
func (kr *Keyring) Open(s Sealed, ad []byte) ([]byte, error) {
	k, ok := kr.byID[s.KeyID]
	if !ok {
		return nil, &Error{Code: CodeKeyUnknown, Message: fmt.Sprintf(
			"the value was sealed under key %q, which is not configured (configured: %s); add it as an old key in %s",
			s.KeyID, strings.Join(kr.IDs(), ", "), EnvKeyFile)}
	}
	if len(s.Nonce) != k.aead.NonceSize() {
		return nil, &Error{Code: CodeOpenFailed, Message: "the stored nonce has the wrong size"}
	}
	pt, err := k.aead.Open(nil, s.Nonce, s.Ciphertext, ad)
	if err != nil {
		return nil, &Error{Code: CodeOpenFailed, Message: fmt.Sprintf("the value under key %q does not authenticate: it was altered or belongs to another row", s.KeyID)}
	}
	return pt, nil
}

// AD builds additional data from the fields that identify a row: each part
// is length-prefixed, so ("ab","c") and ("a","bc") differ.
func AD(parts ...string) []byte {
	var b bytes.Buffer
	b.WriteString("slipway-secret-v1")
	for _, p := range parts {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(p)))
		b.Write(n[:])
		b.WriteString(p)
	}
	return b.Bytes()
}

// Config says where the keys are. KeyFile wins over Key.
type Config struct {
	KeyFile string // a file holding the keys (see Parse)
	Key     string // the keys themselves, as text
}

// ConfigFromEnv reads SLIPWAY_SECRET_KEY_FILE and SLIPWAY_SECRET_KEY.
func ConfigFromEnv(getenv func(string) string) Config {
	return Config{KeyFile: getenv(EnvKeyFile), Key: getenv(EnvKey)}
}

// Load builds the keyring of cfg. Without a key it fails with
// secret_key_missing: there is no fallback key, since values sealed under a
// key everyone knows would only look encrypted.
func Load(cfg Config) (*Keyring, error) {
	switch {
	case cfg.KeyFile != "":
		b, err := os.ReadFile(cfg.KeyFile)
		if err != nil {
			return nil, &Error{Code: CodeKeyMissing, Message: fmt.Sprintf("%s=%s: %v", EnvKeyFile, cfg.KeyFile, err)}
		}
		kr, err := Parse(b)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: %w", EnvKeyFile, cfg.KeyFile, err)
		}
		return kr, nil
	case cfg.Key != "":
		kr, err := Parse([]byte(cfg.Key))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvKey, err)
		}
		return kr, nil
	}
	return nil, &Error{Code: CodeKeyMissing, Message: fmt.Sprintf(
		"no key-encryption key: set %s to a file holding 32 random bytes (for example the output of `openssl rand -hex 32`), or %s",
		EnvKeyFile, EnvKey)}
}

// Parse reads keys: exactly 32 raw bytes, or text with one key per line
// (or separated by commas), each 64 hex digits or the base64 (standard or
// URL alphabet, padded or not) of 32 bytes. Blank lines and lines starting
// with # are skipped. The first key is the current one; the others only
// open values sealed under them, which is how a rotation is rolled out.
func Parse(b []byte) (*Keyring, error) {
	if len(b) == KeySize && !isKeyText(b) {
		k, err := NewKey(b)
		if err != nil {
			return nil, err
		}
		return New(k), nil
	}
	var keys []*Key
	for i, line := range strings.FieldsFunc(string(b), func(r rune) bool { return r == '\n' || r == ',' }) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		raw, err := decodeKey(line)
		if err != nil {
			return nil, &Error{Code: CodeKeyInvalid, Message: fmt.Sprintf("key %d: %v", i+1, err)}
		}
		k, err := NewKey(raw)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, &Error{Code: CodeKeyMissing, Message: "the key text holds no key"}
	}
	return New(keys[0], keys[1:]...), nil
}

// isKeyText tells whether 32 bytes are text rather than a raw key. A key's
// text is longer than 32 characters, so 32 printable bytes are an error in
// text form; a random raw key is all printable ASCII with a probability
// of about 1e-17.
func isKeyText(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

func decodeKey(s string) ([]byte, error) {
	if len(s) == 2*KeySize {
		if raw, err := hex.DecodeString(s); err == nil {
			return raw, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if raw, err := enc.DecodeString(s); err == nil && len(raw) == KeySize {
			return raw, nil
		}
	}
	return nil, fmt.Errorf("want 64 hex digits or the base64 of %d bytes", KeySize)
}

// Generate returns a new random key in the text form Parse reads (hex).
func Generate() (string, error) {
	raw := make([]byte, KeySize)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("generate key: %w", err)
	}
	return hex.EncodeToString(raw), nil
}

// LoadOrCreate loads the keyring in path, creating the file with a new
// random key (mode 0600, directory 0700) when it does not exist. Only
// `slipway dev` uses it: production keys are provisioned by the operator.
func LoadOrCreate(path string) (*Keyring, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("create key file: %w", err)
		}
		key, err := Generate()
		if err != nil {
			return nil, err
		}
		// O_EXCL: two dev processes starting at once must not both write a
		// key and seal values under different ones.
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			_, err = f.WriteString(key + "\n")
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return nil, fmt.Errorf("write key file %s: %w", path, err)
			}
		} else if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("create key file %s: %w", path, err)
		}
	}
	return Load(Config{KeyFile: path})
}
