package backupstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Target stores archives under keys such as
// <team>/<application>/<environment>/<backup id>.tar.
type Target interface {
	// Kind is "directory" or "s3".
	Kind() string
	// Put stores r under key and returns its size and SHA-256 (hex).
	Put(ctx context.Context, key string, r io.Reader) (size int64, sum string, err error)
	// Get opens the archive under key.
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	// Delete removes the archive under key; a missing one is not an error.
	Delete(ctx context.Context, key string) error
}

// ErrNotFound is returned by Get for a key that holds nothing.
var ErrNotFound = errors.New("backup archive not found")

// counter hashes and counts what passes through it.
type counter struct {
	h hash.Hash
	n int64
}

func newCounter() *counter { return &counter{h: sha256.New()} }

func (c *counter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.h.Write(p)
}

func (c *counter) sum() string { return hex.EncodeToString(c.h.Sum(nil)) }

// checkKey refuses keys that could leave the target's root.
func checkKey(key string) error {
	if key == "" || strings.HasPrefix(key, "/") || strings.Contains(key, "..") || strings.Contains(key, "\\") {
		return fmt.Errorf("backup key %q is not a relative path", key)
	}
	return nil
}

// Directory keeps archives under Root on the local file system.
type Directory struct {
	Root string
}

// Kind is "directory".
func (Directory) Kind() string { return "directory" }

// Put writes to a temporary file and renames it into place once complete
// and synced, so a half-written archive never has the final name.
func (d Directory) Put(ctx context.Context, key string, r io.Reader) (int64, string, error) {
	if err := checkKey(key); err != nil {
		return 0, "", err
	}
	path := filepath.Join(d.Root, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return 0, "", fmt.Errorf("backup directory: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".partial-*")
	if err != nil {
		return 0, "", fmt.Errorf("backup directory: %w", err)
	}
	defer os.Remove(tmp.Name())
	c := newCounter()
	_, err = io.Copy(io.MultiWriter(tmp, c), ctxReader{ctx, r})
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return 0, "", fmt.Errorf("backup directory: write %s: %w", key, err)
	}
	return c.n, c.sum(), nil
}

// Get opens the archive file.
func (d Directory) Get(_ context.Context, key string) (io.ReadCloser, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(d.Root, filepath.FromSlash(key)))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	return f, err
}

// Delete removes the archive file.
func (d Directory) Delete(_ context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	err := os.Remove(filepath.Join(d.Root, filepath.FromSlash(key)))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// ctxReader stops a copy once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// S3Config locates a bucket. Endpoint is host[:port]; Insecure uses
// plain HTTP (a store on a private network).
type S3Config struct {
	Endpoint        string
	Bucket          string
	Prefix          string
	Region          string
	Insecure        bool
	AccessKeyID     string
	SecretAccessKey string
}

// S3 keeps archives in a bucket.
type S3 struct {
	client *minio.Client
	cfg    S3Config
}

// NewS3 builds the client; it does not contact the store.
func NewS3(cfg S3Config) (*S3, error) {
	c, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(cfg.AccessKeyID, cfg.SecretAccessKey, ""),
		Secure: !cfg.Insecure,
		Region: cfg.Region,
	})
	if err != nil {
		return nil, fmt.Errorf("s3 target %s: %w", cfg.Endpoint, err)
	}
	return &S3{client: c, cfg: cfg}, nil
}

// Kind is "s3".
func (*S3) Kind() string { return "s3" }

func (s *S3) object(key string) string {
	p := strings.Trim(s.cfg.Prefix, "/")
	if p == "" {
		return key
	}
	return p + "/" + key
}

// Put uploads r as a multipart upload of unknown size.
func (s *S3) Put(ctx context.Context, key string, r io.Reader) (int64, string, error) {
	if err := checkKey(key); err != nil {
		return 0, "", err
	}
	c := newCounter()
	_, err := s.client.PutObject(ctx, s.cfg.Bucket, s.object(key), io.TeeReader(r, c), -1,
		minio.PutObjectOptions{ContentType: "application/x-tar", PartSize: 16 << 20})
	if err != nil {
		return 0, "", fmt.Errorf("s3 target: put %s: %w", key, err)
	}
	return c.n, c.sum(), nil
}

// Get downloads the object.
func (s *S3) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if _, err := s.client.StatObject(ctx, s.cfg.Bucket, s.object(key), minio.StatObjectOptions{}); err != nil {
		if minio.ToErrorResponse(err).Code == "NoSuchKey" {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, key)
		}
		return nil, fmt.Errorf("s3 target: stat %s: %w", key, err)
	}
	obj, err := s.client.GetObject(ctx, s.cfg.Bucket, s.object(key), minio.GetObjectOptions{})
	if err != nil {
		return nil, fmt.Errorf("s3 target: get %s: %w", key, err)
	}
	return obj, nil
}

// Delete removes the object.
func (s *S3) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := s.client.RemoveObject(ctx, s.cfg.Bucket, s.object(key), minio.RemoveObjectOptions{}); err != nil {
		return fmt.Errorf("s3 target: delete %s: %w", key, err)
	}
	return nil
}

// Check verifies the bucket exists and the credentials reach it.
func (s *S3) Check(ctx context.Context) error {
	ok, err := s.client.BucketExists(ctx, s.cfg.Bucket)
	if err != nil {
		return fmt.Errorf("s3 target %s: %w", s.cfg.Endpoint, err)
	}
	if !ok {
		return fmt.Errorf("s3 target %s: bucket %q does not exist", s.cfg.Endpoint, s.cfg.Bucket)
	}
	return nil
}
