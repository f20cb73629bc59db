package security

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/store/storetest"
)

// TestSecretKey_NoFallback proves there is no default key: loading with no
// key configured fails with secret_key_missing, and so does an empty key.
func TestSecretKey_NoFallback(t *testing.T) {
	for _, cfg := range []keyring.Config{{}, {Key: "  \n"}} {
		kr, err := keyring.Load(cfg)
		if err == nil || kr != nil {
			t.Fatalf("Load(%+v) = %v, %v; want secret_key_missing", cfg, kr, err)
		}
		if !errors.Is(err, keyring.ErrKeyMissing) || !strings.Contains(err.Error(), keyring.CodeKeyMissing) {
			t.Fatalf("Load(%+v): %v; want %s", cfg, err, keyring.CodeKeyMissing)
		}
	}
}

// slipwayBinary is $SLIPWAY_BIN (set by make test) or a fresh build.
func slipwayBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("SLIPWAY_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "slipway")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/slipwayhq/slipway/cmd/slipway").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestSecretKey_WorkerRefusesToStart runs the real `slipway worker` against
// a reachable, migrated database with no key in its environment: it must
// exit non-zero naming secret_key_missing rather than run jobs.
func TestSecretKey_WorkerRefusesToStart(t *testing.T) {
	if os.Getenv("DATABASE_URL") == "" {
		t.Skip("DATABASE_URL is not set")
	}
	bin := slipwayBinary(t)
	dbURL := storetest.NewDatabaseURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "worker")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "DATABASE_URL=" + dbURL}
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("worker still running after 60s without a key; output:\n%s", out)
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("worker without a key: %v; want a non-zero exit\n%s", err, out)
	}
	if !strings.Contains(string(out), keyring.CodeKeyMissing) {
		t.Fatalf("worker exited (%v) without naming %s:\n%s", err, keyring.CodeKeyMissing, out)
	}
}
