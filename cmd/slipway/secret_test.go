package main

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/secrets"
)

// startSecretCLIServer is startCLIServer plus a second front end on the
// same database with a keyring-backed secret service, which the CLI then
// talks to.
func startSecretCLIServer(t *testing.T) *cliServer {
	t.Helper()
	s := startCLIServer(t)
	keyText, err := keyring.Generate()
	if err != nil {
		t.Fatal(err)
	}
	kr, err := keyring.Parse([]byte(keyText))
	if err != nil {
		t.Fatal(err)
	}
	f := app.New(app.Config{Store: s.st, Argon2: auth.TestArgon2, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Secrets: secrets.New(s.st, kr)})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = f.Listener(ln) }()
	t.Cleanup(func() { _ = f.Shutdown() })
	t.Setenv("SLIPWAY_URL", "http://"+ln.Addr().String())
	return s
}

// runCLIHiding runs the CLI with stdin and fails the test if value shows
// up in anything it printed.
func runCLIHiding(t *testing.T, value, stdin string, args ...string) (string, string, int) {
	t.Helper()
	root := newRootCommand()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(args)
	code := 0
	if err := root.Execute(); err != nil {
		code = exitCode(err)
		errOut.WriteString(err.Error())
	}
	if strings.Contains(out.String()+errOut.String(), value) {
		t.Fatalf("%v printed the secret value: %s %s", args, out.String(), errOut.String())
	}
	return out.String(), errOut.String(), code
}

func TestCLI_Secrets(t *testing.T) {
	startSecretCLIServer(t)
	const value = "cli-SECRET-VALUE-5e2c0d"
	run := func(stdin string, args ...string) (string, string, int) {
		t.Helper()
		return runCLIHiding(t, value, stdin, args...)
	}
	if _, stderr, code := run("", "app", "apply", "--file", writeManifest(t, cliManifest)); code != 0 {
		t.Fatalf("apply: %s", stderr)
	}

	// No value on the command line: a file or stdin only.
	if _, stderr, code := run("", "app", "secret", "set", "clinotes", "db-password"); code == 0 || !strings.Contains(stderr, "value_required") {
		t.Fatalf("set without a value: exit %d %s", code, stderr)
	}
	file := filepath.Join(t.TempDir(), "value")
	if err := os.WriteFile(file, []byte(value), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := run("", "app", "secret", "set", "clinotes", "db-password", "--value-file", file)
	if code != 0 || !strings.Contains(stdout, "secret db-password: version 1 (23 bytes), every environment") {
		t.Fatalf("set from file: exit %d %s %s", code, stdout, stderr)
	}
	stdout, stderr, code = run(value+"-2", "app", "secret", "set", "clinotes", "db-password", "--from-stdin", "--env", "staging", "--previews")
	if code != 0 || !strings.Contains(stdout, "version 2 (25 bytes), environments: staging, previews") {
		t.Fatalf("set from stdin: exit %d %s %s", code, stdout, stderr)
	}
	stdout, _, code = run("", "app", "secret", "list", "clinotes")
	if code != 0 || !strings.Contains(stdout, "NAME") || !strings.Contains(stdout, "db-password") || !strings.Contains(stdout, "environments: staging, previews") {
		t.Fatalf("list: %s", stdout)
	}
	if _, stderr, code := run("", "app", "secret", "access", "clinotes", "db-password"); code == 0 || !strings.Contains(stderr, "access_required") {
		t.Fatalf("access without a grant: %s", stderr)
	}
	if _, stderr, code := run("", "app", "secret", "access", "clinotes", "db-password", "--env", "nowhere"); code == 0 || !strings.Contains(stderr, "environment_not_found") {
		t.Fatalf("access to an unknown environment: %s", stderr)
	}
	stdout, _, code = run("", "app", "secret", "access", "clinotes", "db-password", "--all", "--previews=false")
	if code != 0 || strings.TrimSpace(stdout) != "secret db-password: every environment" {
		t.Fatalf("access --all: %q", stdout)
	}

	stdout, _, code = run("", "app", "generated-secret", "list", "clinotes", "--env", "staging")
	if code != 0 || !strings.Contains(stdout, "environment staging has no generated secrets yet") {
		t.Fatalf("generated list: %s", stdout)
	}
	if _, stderr, code := run("", "env", "secret", "clinotes", "--env", "staging", "regenerate", "session-key"); code == 0 || !strings.Contains(stderr, "generated_secret_not_found") {
		t.Fatalf("regenerate unknown: %s", stderr)
	}
	if _, stderr, code := run("", "env", "secret", "clinotes", "--env", "staging", "rotate", "session-key"); code == 0 || !strings.Contains(stderr, "action_unknown") {
		t.Fatalf("unknown action: %s", stderr)
	}

	if stdout, stderr, code := run("", "app", "secret", "delete", "clinotes", "db-password"); code != 0 || !strings.Contains(stdout, "deleted") {
		t.Fatalf("delete: %s %s", stdout, stderr)
	}
	if stdout, _, _ := run("", "app", "secret", "list", "clinotes"); !strings.Contains(stdout, "no stored secrets") {
		t.Fatalf("list after delete: %s", stdout)
	}
	if _, stderr, code := run("", "app", "secret", "delete", "clinotes", "db-password"); code == 0 || !strings.Contains(stderr, "secret_not_found") {
		t.Fatalf("delete again: %s", stderr)
	}
}

// TestServe_RefusesWithoutSecretKey: serve needs the key before it touches
// the database, like the worker.
func TestServe_RefusesWithoutSecretKey(t *testing.T) {
	t.Setenv(keyring.EnvKey, "")
	t.Setenv(keyring.EnvKeyFile, "")
	t.Setenv(envDatabaseURL, "postgres://nobody@127.0.0.1:1/none")
	_, stderr, code := runCLI(t, "serve", "--listen", "127.0.0.1:0")
	if code == 0 || !strings.Contains(stderr, keyring.CodeKeyMissing) {
		t.Fatalf("serve without a key: exit %d %s", code, stderr)
	}
}
