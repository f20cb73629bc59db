package main

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

// TestCLI_ServiceControlsAndAppDelete: the CLI has the dashboard's
// Scale, Restart and Delete application: scale saves the replicas and
// deploys the environment, restart needs a service the environment runs,
// delete asks for --yes and accepts the application's name.
func TestCLI_ServiceControlsAndAppDelete(t *testing.T) {
	s := startCLIServer(t)
	if _, stderr, code := runCLI(t, "app", "apply", "--file", writeManifest(t, promoteManifest)); code != 0 {
		t.Fatalf("apply: %d %s", code, stderr)
	}
	stdout, stderr, code := runCLI(t, "env", "scale", "promonotes", "staging", "web", "3")
	if code != 0 || !strings.Contains(stdout, "revision 2 sets spec.services.web.replicas to 3") || !strings.Contains(stdout, "deployment dep_") {
		t.Fatalf("scale: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	// The requested deployment would block the delete: cancel it, as a
	// user would.
	dep := stdout[strings.Index(stdout, "dep_"):]
	dep = dep[:strings.IndexAny(dep, " \n")]
	if _, stderr, code := runCLI(t, "deployment", "cancel", dep); code != 0 {
		t.Fatalf("cancel %s: %s", dep, stderr)
	}
	if _, stderr, code := runCLI(t, "env", "restart", "promonotes", "staging", "web"); code == 0 || !strings.Contains(stderr, "service_not_found") {
		t.Fatalf("restart of a never-deployed environment: exit %d, stderr %s", code, stderr)
	}
	if _, stderr, code := runCLI(t, "app", "delete", "promonotes"); code == 0 || !strings.Contains(stderr, "confirmation_required") {
		t.Fatalf("delete without --yes: exit %d, stderr %s", code, stderr)
	}
	if stdout, stderr, code := runCLI(t, "app", "delete", "promonotes", "--yes"); code != 0 || !strings.Contains(stdout, "deleted promonotes") {
		t.Fatalf("delete: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	if _, err := s.st.GetApplicationByName(context.Background(), s.team.ID, "promonotes"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
}

// TestCLI_Tokens: the API tokens page's create, list and revoke, with an
// expiry.
func TestCLI_Tokens(t *testing.T) {
	startCLIServer(t)
	stdout, stderr, code := runCLI(t, "token", "create", "ci", "--scope", "apps:read", "--expires-in-days", "30")
	if code != 0 || !strings.HasPrefix(strings.TrimSpace(stdout), "slw_") {
		t.Fatalf("create: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	stdout, _, code = runCLI(t, "token", "list")
	var id string
	for _, line := range strings.Split(stdout, "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[1] == "ci" {
			id = f[0]
			if f[2] != "apps:read" || f[3] == "never" {
				t.Errorf("listed %q, want apps:read with an expiry", line)
			}
		}
	}
	if code != 0 || id == "" {
		t.Fatalf("list: exit %d, stdout %q", code, stdout)
	}
	if stdout, stderr, code := runCLI(t, "token", "revoke", id); code != 0 || !strings.Contains(stdout, "revoked "+id) {
		t.Fatalf("revoke: exit %d, %q %s", code, stdout, stderr)
	}
}

// TestCLI_Events: the audit log page's list and filters, paged with
// --before as its Older events button pages.
func TestCLI_Events(t *testing.T) {
	startCLIServer(t)
	if _, stderr, code := runCLI(t, "app", "apply", "--file", writeManifest(t, promoteManifest)); code != 0 {
		t.Fatalf("apply: %d %s", code, stderr)
	}
	if _, stderr, code := runCLI(t, "app", "delete", "promonotes", "--yes"); code != 0 {
		t.Fatalf("delete: %d %s", code, stderr)
	}
	rows := func(stdout string) [][]string {
		var out [][]string
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n")[1:] {
			if f := strings.Fields(line); len(f) > 4 && f[0] != "older" {
				out = append(out, f)
			}
		}
		return out
	}
	stdout, stderr, code := runCLI(t, "events", "--kind", "application", "--limit", "1")
	if code != 0 || len(rows(stdout)) != 1 || rows(stdout)[0][4] != "application.delete" || !strings.Contains(stdout, "older events: --before ") {
		t.Fatalf("newest application event: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	before := strings.Fields(stdout[strings.Index(stdout, "--before "):])[1]
	stdout, _, code = runCLI(t, "events", "--kind", "application", "--before", before)
	if code != 0 || len(rows(stdout)) == 0 || slices.ContainsFunc(rows(stdout), func(f []string) bool { return f[4] == "application.delete" }) {
		t.Fatalf("the older page: exit %d, stdout %q", code, stdout)
	}
	if _, stderr, code := runCLI(t, "events", "--limit", "501"); code == 0 || !strings.Contains(stderr, "limit_invalid") {
		t.Fatalf("--limit 501: exit %d, stderr %s", code, stderr)
	}
}
