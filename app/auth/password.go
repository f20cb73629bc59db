package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// Password length rules. The maximum is in bytes because that is what the
// hash consumes; it also bounds the work an attacker can make us do.
const (
	MinPasswordChars = 12
	MaxPasswordBytes = 128
)

// PasswordError says why a password was refused, with a snake_case code.
type PasswordError struct {
	Code    string
	Message string
}

func (e *PasswordError) Error() string { return e.Message }

// CheckPassword applies the password rules and returns a *PasswordError.
func CheckPassword(pw string) error {
	switch {
	case len(pw) > MaxPasswordBytes:
		return &PasswordError{Code: "password_too_long", Message: fmt.Sprintf("password must be at most %d bytes", MaxPasswordBytes)}
	case utf8.RuneCountInString(pw) < MinPasswordChars:
		return &PasswordError{Code: "password_too_short", Message: fmt.Sprintf("password must be at least %d characters", MinPasswordChars)}
	case strings.TrimSpace(pw) == "":
		return &PasswordError{Code: "password_blank", Message: "password must not be only spaces"}
	}
	return nil
}

// Argon2Params are the argon2id cost parameters. They are encoded into every
// hash, so raising them later keeps old hashes verifiable.
type Argon2Params struct {
	MemoryKiB uint32
	Time      uint32
	Threads   uint8
}

// DefaultArgon2 follows RFC 9106's second recommended option (64 MiB, t=3),
// with parallelism 2 to suit small control-plane machines.
var DefaultArgon2 = Argon2Params{MemoryKiB: 64 * 1024, Time: 3, Threads: 2}

// TestArgon2 is cheap enough for test suites that sign in hundreds of times.
var TestArgon2 = Argon2Params{MemoryKiB: 1024, Time: 1, Threads: 1}

const (
	saltLen = 16
	keyLen  = 32
)

var errMalformedHash = errors.New("malformed argon2id hash")

// HashPassword returns the PHC-style encoding
// $argon2id$v=19$m=<KiB>,t=<time>,p=<threads>$<salt>$<key> (base64, no padding).
func HashPassword(p Argon2Params, pw string) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("hash password: salt: %w", err)
	}
	key := argon2.IDKey([]byte(pw), salt, p.Time, p.MemoryKiB, p.Threads, keyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.MemoryKiB, p.Time, p.Threads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

var b64 = base64.RawStdEncoding

// VerifyPassword reports whether pw matches the encoded hash, using the
// parameters recorded in the hash.
func VerifyPassword(encoded, pw string) (bool, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errMalformedHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, fmt.Errorf("%w: version %q", errMalformedHash, parts[2])
	}
	var p Argon2Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.MemoryKiB, &p.Time, &p.Threads); err != nil {
		return false, fmt.Errorf("%w: parameters: %w", errMalformedHash, err)
	}
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, fmt.Errorf("%w: salt: %w", errMalformedHash, err)
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false, fmt.Errorf("%w: key", errMalformedHash)
	}
	got := argon2.IDKey([]byte(pw), salt, p.Time, p.MemoryKiB, p.Threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}
