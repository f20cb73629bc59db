package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/config"
)

func runConfigCommand(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"config"}, args...))
	err := root.Execute()
	return out.String(), err
}

// The commands read the process environment; these tests set it, so they
// do not run in parallel.
func TestConfigValidateCommand(t *testing.T) {
	t.Setenv(config.EnvConfigPath, "")
	t.Setenv("DATABASE_URL", "")
	t.Setenv("SLIPWAY_DATABASE_URL", "")
	dir := t.TempDir()
	good := filepath.Join(dir, "good.toml")
	if err := os.WriteFile(good, []byte("[worker]\ndeploy_concurrency = 3\n[metrics]\ntoken = \"hunter2\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("[ingress]\nhttp_port = 0\nbogus = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	out, err := runConfigCommand(t, "validate", "--config", good)
	if err != nil || !strings.Contains(out, "configuration is valid") {
		t.Errorf("valid file: %v\n%s", err, out)
	}

	out, err = runConfigCommand(t, "validate", "--config", good, "--print")
	if err != nil || !strings.Contains(out, "deploy_concurrency = 3") || strings.Contains(out, "hunter2") || !strings.Contains(out, "(secret)") {
		t.Errorf("--print must show the effective values with secrets redacted: %v\n%s", err, out)
	}

	out, err = runConfigCommand(t, "validate", "--config", bad)
	if err == nil || exitCode(err) != 1 || !strings.Contains(out, bad+":3:1: ingress.bogus: unknown key") {
		t.Errorf("unknown key: exit %d, %v\n%s", exitCode(err), err, out)
	}

	t.Setenv("SLIPWAY_WORKER_DEPLOY_CONCURRENCY", "0")
	out, err = runConfigCommand(t, "validate", "--config", good, "--format", "json")
	var got struct {
		Valid  bool
		Errors []config.Error
	}
	if jerr := json.Unmarshal([]byte(out[:strings.IndexByte(out, '\n')+1]), &got); jerr != nil || err == nil || exitCode(err) != 1 {
		t.Fatalf("json output: %v, %v\n%s", jerr, err, out)
	}
	if got.Valid || len(got.Errors) != 1 || got.Errors[0].Key != "worker.deploy_concurrency" || got.Errors[0].Source != "env SLIPWAY_WORKER_DEPLOY_CONCURRENCY" || got.Errors[0].Code != config.CodeOutOfRange {
		t.Errorf("env value out of range: %+v", got)
	}
	t.Setenv("SLIPWAY_WORKER_DEPLOY_CONCURRENCY", "")

	out, err = runConfigCommand(t, "validate", "--config", filepath.Join(dir, "missing.toml"))
	if err == nil || exitCode(err) != 1 || !strings.Contains(out, config.CodeFileMissing) {
		t.Errorf("named missing file: %v\n%s", err, out)
	}
}

func TestConfigDefaultCommand(t *testing.T) {
	out, err := runConfigCommand(t, "default")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "slipway.toml")
	if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	noEnv := func(string) (string, bool) { return "", false }
	c, err := config.Options{Path: path, Explicit: true, LookupEnv: noEnv}.Load()
	if err != nil || !reflect.DeepEqual(c, config.Default()) {
		t.Errorf("config default does not decode to the defaults: %v", err)
	}
}

func TestLoadConfig_FlagsWinOnlyWhenSet(t *testing.T) {
	t.Setenv(config.EnvConfigPath, "")
	t.Setenv("SLIPWAY_LISTEN", "127.0.0.1:7001")
	newCmd := func() *cobra.Command {
		cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
		addConfigFlag(cmd)
		cmd.Flags().String("listen", "127.0.0.1:8080", "")
		return cmd
	}
	cmd := newCmd()
	if err := cmd.ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	c, err := loadConfig(cmd, map[string]string{"listen": "listen"})
	if err != nil || c.Listen != "127.0.0.1:7001" {
		t.Errorf("unset flag must not override the environment: %q, %v", c.Listen, err)
	}
	cmd = newCmd()
	if err := cmd.ParseFlags([]string{"--listen", "127.0.0.1:7002"}); err != nil {
		t.Fatal(err)
	}
	c, err = loadConfig(cmd, map[string]string{"listen": "listen"})
	if err != nil || c.Listen != "127.0.0.1:7002" {
		t.Errorf("set flag must win: %q, %v", c.Listen, err)
	}
}
