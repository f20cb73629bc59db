package backupstore_test

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"testing"

	"github.com/slipwayhq/slipway/backupstore"
	"github.com/slipwayhq/slipway/backupstore/s3test"
)

// roundTrip stores 40 MiB (more than two multipart parts on S3), reads it
// back byte for byte, checks size and checksum, and deletes it.
func roundTrip(t *testing.T, target backupstore.Target) {
	t.Helper()
	data := make([]byte, 40<<20)
	_, _ = rand.Read(data)
	want := sha256.Sum256(data)
	size, sum, err := target.Put(t.Context(), "team/app/env/bak_1.tar", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if size != int64(len(data)) || sum != hex.EncodeToString(want[:]) {
		t.Fatalf("put = %d %s, want %d %x", size, sum, len(data), want)
	}
	rc, err := target.Get(t.Context(), "team/app/env/bak_1.tar")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("get: %d bytes, err %v; equal %v", len(got), err, bytes.Equal(got, data))
	}
	if err := target.Delete(t.Context(), "team/app/env/bak_1.tar"); err != nil {
		t.Fatal(err)
	}
	if _, err := target.Get(t.Context(), "team/app/env/bak_1.tar"); !errors.Is(err, backupstore.ErrNotFound) {
		t.Fatalf("get after delete: %v, want ErrNotFound", err)
	}
	if _, _, err := target.Put(t.Context(), "../escape.tar", bytes.NewReader(nil)); err == nil {
		t.Error("a key leaving the target was accepted")
	}
}

func TestDirectory_RoundTrip(t *testing.T) {
	t.Parallel()
	roundTrip(t, backupstore.Directory{Root: t.TempDir()})
}

// TestS3_RoundTrip runs against versitygw, a real S3 server.
func TestS3_RoundTrip(t *testing.T) {
	t.Parallel()
	cfg := s3test.Start(t)
	s3, err := backupstore.NewS3(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s3.Check(t.Context()); err != nil {
		t.Fatal(err)
	}
	roundTrip(t, s3)
	bad := cfg
	bad.SecretAccessKey = "wrong"
	s3bad, _ := backupstore.NewS3(bad)
	if err := s3bad.Check(t.Context()); err == nil {
		t.Error("wrong credentials passed the check")
	}
}
