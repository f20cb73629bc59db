package certstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/certmagic"

	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/store"
)

// Defaults of Storage's lock timing.
const (
	DefaultLockTTL   = time.Minute
	DefaultLockRetry = time.Second
)

// Storage is certmagic.Storage on the store's cert_storage and cert_locks
// tables. It is safe for concurrent use.
type Storage struct {
	st *store.Store
	kr *keyring.Keyring
	// LockTTL is how long a lock outlives its holder; the holder extends
	// it every LockTTL/3. LockRetry is how often a waiting Lock tries again.
	LockTTL   time.Duration
	LockRetry time.Duration
	Log       *slog.Logger

	mu   sync.Mutex
	held map[string]*heldLock
}

type heldLock struct {
	token string
	stop  context.CancelFunc
	done  chan struct{}
}

var _ certmagic.Storage = (*Storage)(nil)

// New returns a Storage on st (a pool-backed store: locks are taken and
// kept from goroutines of their own) sealing values with kr.
func New(st *store.Store, kr *keyring.Keyring) *Storage {
	return &Storage{st: st, kr: kr, LockTTL: DefaultLockTTL, LockRetry: DefaultLockRetry, Log: slog.Default(), held: map[string]*heldLock{}}
}

func cleanKey(key string) string { return strings.Trim(key, "/") }

func notExist(key string) error { return fmt.Errorf("%s: %w", key, fs.ErrNotExist) }

// Store puts value at key, overwriting it.
func (s *Storage) Store(ctx context.Context, key string, value []byte) error {
	key = cleanKey(key)
	if key == "" {
		return errors.New("certificate storage: empty key")
	}
	sealed, err := s.kr.Seal(value, ad(key))
	if err != nil {
		return fmt.Errorf("certificate storage %s: %w", key, err)
	}
	return s.st.PutCertObject(ctx, key, store.SealedCertValue{KeyID: sealed.KeyID, Nonce: sealed.Nonce, Ciphertext: sealed.Ciphertext, Size: int64(len(value))})
}

// ad binds a sealed value to its key: a value copied under another key
// does not open.
func ad(key string) []byte { return keyring.AD("cert_storage", key) }

// Load returns key's value, an error wrapping fs.ErrNotExist when none.
// A value sealed under a key no longer configured is logged and reported
// missing too: certmagic then obtains the certificate again rather than
// failing for good.
func (s *Storage) Load(ctx context.Context, key string) ([]byte, error) {
	key = cleanKey(key)
	v, err := s.st.CertObjectValue(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notExist(key)
	}
	if err != nil {
		return nil, err
	}
	plain, err := s.kr.Open(keyring.Sealed{KeyID: v.KeyID, Nonce: v.Nonce, Ciphertext: v.Ciphertext}, ad(key))
	if err != nil {
		s.Log.Warn("certificate storage value does not open: treated as missing", "key", key, "err", err)
		return nil, notExist(key)
	}
	return plain, nil
}

// Delete deletes key and, when it is a directory, every key under it;
// deleting what does not exist is not an error.
func (s *Storage) Delete(ctx context.Context, key string) error {
	return s.st.DeleteCertObjects(ctx, cleanKey(key))
}

// Exists says whether key is a key or a directory of keys.
func (s *Storage) Exists(ctx context.Context, key string) bool {
	_, err := s.Stat(ctx, key)
	return err == nil
}

// Stat describes key: a terminal key with its size and time, or a
// directory (a prefix of other keys); fs.ErrNotExist when neither.
func (s *Storage) Stat(ctx context.Context, key string) (certmagic.KeyInfo, error) {
	key = cleanKey(key)
	o, err := s.st.CertObjectInfo(ctx, key)
	if err == nil {
		return certmagic.KeyInfo{Key: key, Modified: o.ModifiedAt, Size: o.Size, IsTerminal: true}, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return certmagic.KeyInfo{}, err
	}
	keys, err := s.st.CertObjectKeys(ctx, key)
	if err != nil {
		return certmagic.KeyInfo{}, err
	}
	if len(keys) == 0 || key == "" {
		return certmagic.KeyInfo{}, notExist(key)
	}
	return certmagic.KeyInfo{Key: key, IsTerminal: false}, nil
}

// List returns the keys under dir as FileStorage does: its direct
// children (keys and directories), or with recursive every key and
// directory below it; fs.ErrNotExist when nothing is under dir.
func (s *Storage) List(ctx context.Context, dir string, recursive bool) ([]string, error) {
	dir = cleanKey(dir)
	keys, err := s.st.CertObjectKeys(ctx, dir)
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, notExist(dir)
	}
	seen := map[string]bool{}
	var out []string
	add := func(k string) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	for _, k := range keys {
		rest := k
		if dir != "" {
			rest = strings.TrimPrefix(k, dir+"/")
		}
		parts := strings.Split(rest, "/")
		if !recursive {
			add(path.Join(dir, parts[0]))
			continue
		}
		for i := range parts {
			add(path.Join(dir, strings.Join(parts[:i+1], "/")))
		}
	}
	return out, nil
}

// Lock takes the named lock, waiting (every LockRetry) while another
// holder has it and it has not expired, until ctx ends. Held, it is
// extended every LockTTL/3 until Unlock.
func (s *Storage) Lock(ctx context.Context, name string) error {
	token, err := newToken()
	if err != nil {
		return err
	}
	for {
		ok, err := s.st.TryCertLock(ctx, name, token, s.LockTTL)
		if err != nil {
			return err
		}
		if ok {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("certificate lock %s: %w", name, ctx.Err())
		case <-time.After(s.LockRetry):
		}
	}
	kctx, stop := context.WithCancel(context.Background())
	h := &heldLock{token: token, stop: stop, done: make(chan struct{})}
	s.mu.Lock()
	prev := s.held[name]
	s.held[name] = h
	s.mu.Unlock()
	if prev != nil {
		// A lock of this process that expired and was taken again.
		prev.stop()
	}
	go s.keep(kctx, name, h)
	return nil
}

// keep extends a held lock until Unlock stops it or it was lost.
func (s *Storage) keep(ctx context.Context, name string, h *heldLock) {
	defer close(h.done)
	t := time.NewTicker(s.LockTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ok, err := s.st.ExtendCertLock(ctx, name, h.token, s.LockTTL)
		if err != nil && ctx.Err() == nil {
			s.Log.Warn("extend certificate lock", "lock", name, "err", err)
			continue
		}
		if err == nil && !ok {
			s.Log.Warn("certificate lock expired before it was released", "lock", name)
			return
		}
	}
}

// Unlock releases the named lock this Storage holds.
func (s *Storage) Unlock(ctx context.Context, name string) error {
	s.mu.Lock()
	h := s.held[name]
	delete(s.held, name)
	s.mu.Unlock()
	if h == nil {
		return fmt.Errorf("certificate lock %s is not held here", name)
	}
	h.stop()
	<-h.done
	return s.st.ReleaseCertLock(ctx, name, h.token)
}

func newToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
