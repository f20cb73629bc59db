package main

import (
	"strings"
	"testing"
)

func TestCLI_RegistryCredentials(t *testing.T) {
	startSecretCLIServer(t)
	const password = "cli-REGISTRY-TOKEN-81c4aa"
	run := func(stdin string, args ...string) (string, string, int) {
		t.Helper()
		return runCLIHiding(t, password, stdin, args...)
	}
	if _, stderr, code := run("", "registry-credential", "set", "ghcr.io", "--username", "bot"); code == 0 || !strings.Contains(stderr, "password_required") {
		t.Fatalf("set without a password: exit %d %s", code, stderr)
	}
	stdout, stderr, code := run(password+"\n", "registry-credential", "set", "https://GHCR.io/", "--username", "bot", "--password-stdin")
	if code != 0 || !strings.Contains(stdout, "registry ghcr.io: user bot (password stored, 25 bytes)") {
		t.Fatalf("set: exit %d %s %s", code, stdout, stderr)
	}
	if _, stderr, code := run(password, "registry-credential", "set", "ghcr.io", "--password-stdin"); code == 0 || !strings.Contains(stderr, "registry_username_invalid") {
		t.Fatalf("set without a user: exit %d %s", code, stderr)
	}
	stdout, _, code = run("", "registry-credential", "list")
	if code != 0 || !strings.Contains(stdout, "HOST") || !strings.Contains(stdout, "ghcr.io") || !strings.Contains(stdout, "bot") {
		t.Fatalf("list: %s", stdout)
	}
	if stdout, stderr, code := run("", "registry-credential", "delete", "ghcr.io"); code != 0 || !strings.Contains(stdout, "deleted") {
		t.Fatalf("delete: %s %s", stdout, stderr)
	}
	if _, stderr, code := run("", "registry-credential", "delete", "ghcr.io"); code == 0 || !strings.Contains(stderr, "registry_credential_not_found") {
		t.Fatalf("delete again: %s", stderr)
	}
	if stdout, _, _ := run("", "registry-credential", "list"); !strings.Contains(stdout, "no registry credentials") {
		t.Fatalf("list after delete: %s", stdout)
	}
}
