// Package s3test runs a real S3 server for tests: versitygw (the Versity
// S3 Gateway, pinned in test/s3server's own module) with its POSIX backend
// over a temporary directory, on a loopback port.
package s3test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/slipwayhq/slipway/backupstore"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds versitygw once per version of test/s3server/go.sum,
// keeping it in the user cache directory.
func binary() (string, error) {
	buildOnce.Do(func() {
		_, self, _, _ := runtime.Caller(0)
		mod := filepath.Join(filepath.Dir(self), "..", "..", "test", "s3server")
		sum, err := os.ReadFile(filepath.Join(mod, "go.sum"))
		if err != nil {
			buildErr = err
			return
		}
		h := sha256.Sum256(sum)
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		binPath = filepath.Join(cache, "slipway-s3test", "versitygw-"+hex.EncodeToString(h[:6]))
		if _, err := os.Stat(binPath); err == nil {
			return
		}
		if err := os.MkdirAll(filepath.Dir(binPath), 0o755); err != nil {
			buildErr = err
			return
		}
		tmp := fmt.Sprintf("%s.%d", binPath, os.Getpid())
		cmd := exec.Command("go", "build", "-C", mod, "-o", tmp, "github.com/versity/versitygw/cmd/versitygw")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build versitygw: %v\n%s", err, out)
			return
		}
		buildErr = os.Rename(tmp, binPath)
	})
	return binPath, buildErr
}

// Start runs a server for the test and returns the configuration of a
// bucket created on it. The server stops when the test ends.
func Start(t testing.TB) backupstore.S3Config {
	t.Helper()
	bin, err := binary()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	cfg := backupstore.S3Config{Endpoint: addr, Bucket: "backups", Prefix: "slipway", Region: "us-east-1", Insecure: true,
		AccessKeyID: "slipwaytest", SecretAccessKey: "slipwaytest-secret"}
	cmd := exec.Command(bin, "--port", addr, "posix", t.TempDir())
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+cfg.AccessKeyID, "ROOT_SECRET_KEY="+cfg.SecretAccessKey)
	logs, err := os.Create(filepath.Join(t.TempDir(), "versitygw.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	client, err := minio.New(addr, &minio.Options{Creds: credentials.NewStaticV4(cfg.AccessKeyID, cfg.SecretAccessKey, ""), Region: cfg.Region})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		err := client.MakeBucket(ctx, cfg.Bucket, minio.MakeBucketOptions{Region: cfg.Region})
		if err == nil {
			return cfg
		}
		if ctx.Err() != nil {
			b, _ := os.ReadFile(logs.Name())
			t.Fatalf("versitygw did not create the bucket: %v\n%s", err, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
