package main

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/slipwayhq/slipway/config"
)

// slipway dev reads <data-dir>/slipway.toml, allows file:// repositories
// unless the variable says otherwise, and keeps its local state (telemetry
// receivers' socket directories included) in its data directory.
func TestDevConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "slipway.toml"), []byte("data_dir = \"/elsewhere\"\n[previews]\nmax_per_application = 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLIPWAY_CONFIG", "")
	t.Setenv("SLIPWAY_GIT_ALLOW_FILE_URLS", "")
	os.Unsetenv("SLIPWAY_CONFIG")
	os.Unsetenv("SLIPWAY_GIT_ALLOW_FILE_URLS")
	cfg, err := devConfig(nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Previews.MaxPerApplication != 3 {
		t.Errorf("previews.max_per_application = %d, want 3 from <data-dir>/slipway.toml", cfg.Previews.MaxPerApplication)
	}
	// A new data directory gets the commented default file.
	fresh := t.TempDir()
	if _, err := devConfig(nil, fresh); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(fresh, "slipway.toml")); err != nil {
		t.Errorf("dev did not seed <data-dir>/slipway.toml: %v", err)
	}
	if !cfg.Git.AllowFileURLs {
		t.Error("dev does not allow file:// repositories by default")
	}
	// dev reaches git servers and registries on loopback; serve's
	// defaults do not (outbound policy).
	dev, serve := outboundPolicy(cfg), outboundPolicy(config.Default())
	for _, a := range []string{"127.0.0.1", "::1"} {
		if err := dev.Check("", netip.MustParseAddr(a)); err != nil {
			t.Errorf("dev's outbound policy refuses %s: %v", a, err)
		}
		if serve.Check("", netip.MustParseAddr(a)) == nil {
			t.Errorf("the default outbound policy allows %s", a)
		}
	}
	if dev.Check("", netip.MustParseAddr("169.254.169.254")) == nil {
		t.Error("dev's outbound policy allows the metadata address")
	}
	if cfg.DataDir != dir || telemetryRoot(cfg) != filepath.Join(dir, "telemetry") {
		t.Errorf("data_dir %q, telemetry root %q; want dev's data directory %s", cfg.DataDir, telemetryRoot(cfg), dir)
	}

	t.Setenv("SLIPWAY_GIT_ALLOW_FILE_URLS", "false")
	if cfg, err := devConfig(nil, dir); err != nil || cfg.Git.AllowFileURLs {
		t.Errorf("SLIPWAY_GIT_ALLOW_FILE_URLS=false: allow %v, %v", cfg.Git.AllowFileURLs, err)
	}
}
