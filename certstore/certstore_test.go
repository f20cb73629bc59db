package certstore_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/certstore"
	"github.com/slipwayhq/slipway/keyring/keyringtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

func newStorage(t *testing.T, st *store.Store) *certstore.Storage {
	s := certstore.New(st, keyringtest.New(t))
	s.LockTTL, s.LockRetry = 3*time.Second, 20*time.Millisecond
	return s
}

// TestStorage_Semantics checks certmagic's documented Storage contract:
// Store overwrites, Load of a missing key is fs.ErrNotExist, directories
// exist as prefixes, List walks like FileStorage, Delete removes a
// directory's keys and is no error on what does not exist.
func TestStorage_Semantics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStorage(t, storetest.NewSchema(t))

	if _, err := s.Load(ctx, "certificates/x/a.example/a.example.crt"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load of a missing key: %v, want fs.ErrNotExist", err)
	}
	for k, v := range map[string]string{
		"certificates/acme/a.example/a.example.crt":       "crt-a1",
		"certificates/acme/a.example/a.example.key":       "key-a",
		"certificates/acme/b.example/b.example.crt":       "crt-b",
		"acme/ca/users/ops@example.com/ops.json":          "user",
		"certificates/acme-other/c.example/c.example.crt": "crt-c",
	} {
		if err := s.Store(ctx, k, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	before := time.Now()
	if err := s.Store(ctx, "certificates/acme/a.example/a.example.crt", []byte("crt-a2")); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Load(ctx, "certificates/acme/a.example/a.example.crt"); err != nil || string(v) != "crt-a2" {
		t.Fatalf("Load after overwrite = %q, %v", v, err)
	}
	info, err := s.Stat(ctx, "certificates/acme/a.example/a.example.crt")
	if err != nil || !info.IsTerminal || info.Size != int64(len("crt-a2")) || info.Modified.Before(before.Add(-time.Minute)) {
		t.Fatalf("Stat of a key = %+v, %v", info, err)
	}
	if info, err := s.Stat(ctx, "certificates/acme"); err != nil || info.IsTerminal || info.Key != "certificates/acme" {
		t.Fatalf("Stat of a directory = %+v, %v", info, err)
	}
	if _, err := s.Stat(ctx, "certificates/acm"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat of a partial name: %v, want fs.ErrNotExist", err)
	}
	if !s.Exists(ctx, "certificates") || !s.Exists(ctx, "acme/ca/users/ops@example.com/ops.json") || s.Exists(ctx, "certificates/acme/z.example") {
		t.Fatal("Exists is wrong for a directory, a key or a missing key")
	}

	list := func(dir string, recursive bool) []string {
		t.Helper()
		keys, err := s.List(ctx, dir, recursive)
		if err != nil {
			t.Fatalf("List(%q, %v): %v", dir, recursive, err)
		}
		slices.Sort(keys)
		return keys
	}
	if got, want := list("certificates", false), []string{"certificates/acme", "certificates/acme-other"}; !slices.Equal(got, want) {
		t.Fatalf("List non-recursive = %q, want %q", got, want)
	}
	if got, want := list("certificates/acme/", true), []string{
		"certificates/acme/a.example", "certificates/acme/a.example/a.example.crt", "certificates/acme/a.example/a.example.key",
		"certificates/acme/b.example", "certificates/acme/b.example/b.example.crt",
	}; !slices.Equal(got, want) {
		t.Fatalf("List recursive = %q, want %q", got, want)
	}
	if _, err := s.List(ctx, "nothing/here", false); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("List of a missing directory: %v, want fs.ErrNotExist", err)
	}

	// Delete of a directory takes every key under it, not its siblings
	// sharing the name's prefix.
	if err := s.Delete(ctx, "certificates/acme"); err != nil {
		t.Fatal(err)
	}
	if s.Exists(ctx, "certificates/acme/a.example/a.example.key") || s.Exists(ctx, "certificates/acme") {
		t.Fatal("keys under a deleted directory remain")
	}
	if !s.Exists(ctx, "certificates/acme-other/c.example/c.example.crt") {
		t.Fatal("Delete of certificates/acme took certificates/acme-other")
	}
	if err := s.Delete(ctx, "certificates/acme"); err != nil {
		t.Fatalf("Delete of what is gone: %v", err)
	}
}

// TestStorage_SealsValues: a private key is stored sealed, not in clear,
// and a sealed value copied under another key does not open there.
func TestStorage_SealsValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.NewSchema(t)
	s := newStorage(t, st)
	secret := []byte("-----BEGIN EC PRIVATE KEY----- very secret")
	if err := s.Store(ctx, "certificates/acme/a.example/a.example.key", secret); err != nil {
		t.Fatal(err)
	}
	raw, err := st.CertObjectValue(ctx, "certificates/acme/a.example/a.example.key")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw.Ciphertext, []byte("very secret")) || raw.KeyID == "" || raw.Size != int64(len(secret)) {
		t.Fatalf("stored row %+v: not sealed", raw)
	}
	if v, err := s.Load(ctx, "certificates/acme/a.example/a.example.key"); err != nil || !bytes.Equal(v, secret) {
		t.Fatalf("Load = %q, %v", v, err)
	}
	if err := st.PutCertObject(ctx, "certificates/acme/b.example/b.example.key", raw); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "certificates/acme/b.example/b.example.key"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a value moved under another key: %v, want it treated as missing", err)
	}
	// Another secret key (the old one removed) cannot open it either.
	if _, err := newStorage(t, st).Load(ctx, "certificates/acme/a.example/a.example.key"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a value sealed under an unknown key: %v, want it treated as missing", err)
	}
}

// TestStorage_LockContention runs the critical sections of many goroutines
// on two Storages (two serve processes on one database): never two at once
// for one name, other names are not held up, and every one got its turn.
func TestStorage_LockContention(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.NewSchema(t)
	kr := keyringtest.New(t)
	a, b := certstore.New(st, kr), certstore.New(st, kr)
	a.LockTTL, a.LockRetry, b.LockTTL, b.LockRetry = 3*time.Second, 20*time.Millisecond, 3*time.Second, 20*time.Millisecond
	var inside, max, turns atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Lock(ctx, "issue_cert_a.example"); err != nil {
				t.Error(err)
				return
			}
			n := inside.Add(1)
			for m := max.Load(); n > m && !max.CompareAndSwap(m, n); m = max.Load() {
			}
			time.Sleep(30 * time.Millisecond)
			inside.Add(-1)
			turns.Add(1)
			if err := s.Unlock(ctx, "issue_cert_a.example"); err != nil {
				t.Error(err)
			}
		}()
	}
	// Another name is free while the first is contended.
	octx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := b.Lock(octx, "issue_cert_b.example"); err != nil {
		t.Fatalf("an unrelated lock waited: %v", err)
	}
	if err := b.Unlock(ctx, "issue_cert_b.example"); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if max.Load() != 1 || turns.Load() != 8 {
		t.Fatalf("at most %d holders at once (want 1), %d turns (want 8)", max.Load(), turns.Load())
	}
}

// TestStorage_LockExpiry: a lock whose holder stopped extending it (a
// process that died) is taken once it expired, a held lock outlives its
// TTL while the holder lives, and a waiting Lock honours its context.
func TestStorage_LockExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.NewSchema(t)
	s := newStorage(t, st)

	// A dead holder: taken and never extended.
	if ok, err := st.TryCertLock(ctx, "dead", "gone-process", 5*time.Second); err != nil || !ok {
		t.Fatalf("TryCertLock = %v, %v", ok, err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err := s.Lock(short, "dead")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock of a fresh lock held elsewhere: %v, want the context's deadline", err)
	}
	wait, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := s.Lock(wait, "dead"); err != nil {
		t.Fatalf("Lock of an expired lock: %v", err)
	}

	// The live holder keeps it past LockTTL (3 s): another token cannot take it.
	time.Sleep(2 * s.LockTTL)
	if ok, err := st.TryCertLock(ctx, "dead", "intruder", time.Second); err != nil || ok {
		t.Fatalf("a lock kept fresh was taken by another token (%v, %v)", ok, err)
	}
	if err := s.Unlock(ctx, "dead"); err != nil {
		t.Fatal(err)
	}
	if ok, err := st.TryCertLock(ctx, "dead", "next", time.Second); err != nil || !ok {
		t.Fatalf("after Unlock the lock is not free (%v, %v)", ok, err)
	}
	if err := s.Unlock(ctx, "never-locked"); err == nil {
		t.Fatal("Unlock of a lock never taken is not an error")
	}
}
