package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNotifyCommands drives destinations through the CLI and the real
// API: add (URL from a file, never an argument), list, test, deliveries,
// update, remove.
func TestNotifyCommands(t *testing.T) {
	startCLIServer(t)
	urlFile := filepath.Join(t.TempDir(), "url")
	if err := os.WriteFile(urlFile, []byte("https://hooks.slack.example/services/T/B/cli-secret-part\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "notify", "add", "ops", "--kind", "slack", "--url-file", urlFile, "--events", "deployment.failed,service.unhealthy")
	if code != 0 || !strings.Contains(out, "Added ops (ntf_") {
		t.Fatalf("add: %d %q %q", code, out, errOut)
	}
	out, _, code = runCLI(t, "notify", "list")
	if code != 0 || !strings.Contains(out, "hooks.slack.example") || !strings.Contains(out, "deployment.failed,service.unhealthy") || strings.Contains(out, "cli-secret-part") {
		t.Fatalf("list: %d\n%s", code, out)
	}
	if out, errOut, code = runCLI(t, "notify", "test", "ops"); code != 0 || !strings.Contains(out, "Test queued") {
		t.Fatalf("test: %d %q %q", code, out, errOut)
	}
	if out, _, code = runCLI(t, "notify", "deliveries", "ops"); code != 0 || !strings.Contains(out, "test") || !strings.Contains(out, "pending") {
		t.Fatalf("deliveries: %d\n%s", code, out)
	}
	if out, _, code = runCLI(t, "notify", "update", "ops", "--disable", "--unhealthy-minutes", "10"); code != 0 || !strings.Contains(out, "disabled") {
		t.Fatalf("update: %d %q", code, out)
	}
	if _, errOut, code = runCLI(t, "notify", "add", "bad", "--kind", "pager"); code == 0 || !strings.Contains(errOut, "kind_invalid") {
		t.Fatalf("bad kind: %d %q", code, errOut)
	}
	if out, _, code = runCLI(t, "notify", "remove", "ops"); code != 0 || !strings.Contains(out, "Removed ops") {
		t.Fatalf("remove: %d %q", code, out)
	}
}
