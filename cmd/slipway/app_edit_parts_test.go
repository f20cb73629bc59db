package main

import (
	"context"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
)

// cliEditKit returns helpers for field-edit CLI tests: saved reads the
// application's current manifest from the database, run expects success
// printing wantOut, fail expects an error naming wantErr.
func cliEditKit(t *testing.T, s *cliServer, app string) (saved func() (*manifest.Manifest, int64), run, fail func(want string, args ...string)) {
	saved = func() (*manifest.Manifest, int64) {
		t.Helper()
		ctx := context.Background()
		a, err := s.st.GetApplicationByName(ctx, s.team.ID, app)
		if err != nil {
			t.Fatal(err)
		}
		rev, err := s.st.GetCurrentManifestRevision(ctx, s.team.ID, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		m, err := manifest.Decode(rev.Manifest, "json")
		if err != nil {
			t.Fatal(err)
		}
		return m, rev.Revision
	}
	run = func(wantOut string, args ...string) {
		t.Helper()
		stdout, stderr, code := runCLI(t, args...)
		if code != 0 || !strings.Contains(stdout, wantOut) {
			t.Fatalf("%v: exit %d stdout %q stderr %q", args, code, stdout, stderr)
		}
	}
	fail = func(wantErr string, args ...string) {
		t.Helper()
		_, stderr, code := runCLI(t, args...)
		if code == 0 || !strings.Contains(stderr, wantErr) {
			t.Fatalf("%v: exit %d stderr %q, want %s", args, code, stderr, wantErr)
		}
	}
	return saved, run, fail
}

// TestCLI_FieldEditParts drives the route, job, file, export, import,
// visibility and rollback verbs against the real app.
func TestCLI_FieldEditParts(t *testing.T) {
	s := startCLIServer(t)
	if _, stderr, code := runCLI(t, "app", "apply", "--file", writeManifest(t, cliManifest)); code != 0 {
		t.Fatalf("apply: %s", stderr)
	}
	saved, run, fail := cliEditKit(t, s, "clinotes")

	run("revision 2", "app", "route", "set", "clinotes", "site", "--hostname", "notes.example.com", "--service", "web", "--port", "8080")
	fail("manifest_validation_failed", "app", "route", "set", "clinotes", "site", "--hostname", "notes.example.com", "--service", "ghost", "--port", "8080")
	run("revision 3", "app", "job", "set", "clinotes", "migrate", "--service", "web", "--command", "migrate", "--command=--all", "--timeout-seconds", "60")
	run("revision 4", "app", "file", "set", "clinotes", "web", "/etc/notes.conf", "--content", "a=1", "--mode", "0440")
	run("revision 5", "app", "exports", "add", "clinotes", "web", "--to", "billing")
	run("revision 6", "app", "imports", "add", "clinotes", "billing", "api")
	run("revision 7", "env", "visibility", "clinotes", "staging", "private")
	fail("confirmation_required", "env", "rollback", "clinotes", "staging", "manual")
	fail("rollback_invalid", "env", "rollback", "clinotes", "staging", "sometimes", "--yes")
	fail("generation_conflict", "env", "rollback", "clinotes", "staging", "manual", "--yes", "--expected-revision", "6")
	run("revision 8", "env", "rollback", "clinotes", "staging", "manual", "--yes", "--expected-revision", "7")

	m, rev := saved()
	web := m.Spec.Services[0]
	if rev != 8 || len(m.Spec.Routes) != 1 || m.Spec.Routes[0].Port != 8080 || len(m.Spec.Jobs) != 1 || m.Spec.Jobs[0].TimeoutSeconds.N != 60 ||
		len(web.Files) != 1 || web.Files[0].Mode != "0440" || m.Spec.Exports[0].Applications[0] != "billing" || m.Spec.Imports[0].Service != "api" ||
		m.Spec.Environments["staging"].Visibility != "private" || m.Spec.Environments["staging"].Rollback != "manual" {
		t.Fatalf("saved revision %d: %+v", rev, m.Spec)
	}

	run("revision 9", "app", "route", "remove", "clinotes", "site")
	run("revision 10", "app", "job", "remove", "clinotes", "migrate")
	run("revision 11", "app", "file", "remove", "clinotes", "web", "/etc/notes.conf")
	run("revision 12", "app", "exports", "remove", "clinotes", "web")
	run("revision 13", "app", "imports", "remove", "clinotes", "billing", "api")
	fail("import_unknown", "app", "imports", "remove", "clinotes", "billing", "api")
	run("revision 14", "env", "visibility", "clinotes", "staging", "default")
	m, _ = saved()
	if len(m.Spec.Routes)+len(m.Spec.Jobs)+len(m.Spec.Services[0].Files)+len(m.Spec.Exports)+len(m.Spec.Imports) != 0 || m.Spec.Environments["staging"].Visibility != "" {
		t.Fatalf("after removals: %+v", m.Spec)
	}
}

// TestCLI_AppRename renames an application: same id, the saved manifest
// names it anew, the old name is free and a taken name is refused.
func TestCLI_AppRename(t *testing.T) {
	s := startCLIServer(t)
	ctx := context.Background()
	for _, doc := range []string{cliManifest, strings.Replace(cliManifest, `name = "clinotes"`, `name = "taken"`, 1)} {
		if _, stderr, code := runCLI(t, "app", "apply", "--file", writeManifest(t, doc)); code != 0 {
			t.Fatalf("apply: %s", stderr)
		}
	}
	before, err := s.st.GetApplicationByName(ctx, s.team.ID, "clinotes")
	if err != nil {
		t.Fatal(err)
	}
	_, run, fail := cliEditKit(t, s, "notes")
	fail("application_name_taken", "app", "rename", "clinotes", "taken")
	fail("name_invalid", "app", "rename", "clinotes", "Bad_Name")
	fail("generation_conflict", "app", "rename", "clinotes", "notes", "--expected-revision", "7")
	run("application clinotes renamed to notes: revision 2", "app", "rename", "clinotes", "notes")
	after, err := s.st.GetApplicationByName(ctx, s.team.ID, "notes")
	if err != nil || after.ID != before.ID {
		t.Fatalf("renamed application %+v, %v; want id %s", after, err, before.ID)
	}
	saved, _, _ := cliEditKit(t, s, "notes")
	if m, rev := saved(); m.Metadata.Name != "notes" || rev != 2 {
		t.Fatalf("saved manifest names %q at revision %d", m.Metadata.Name, rev)
	}
	// The old name is free: applying the old manifest creates a new application.
	if _, stderr, code := runCLI(t, "app", "apply", "--file", writeManifest(t, cliManifest)); code != 0 {
		t.Fatalf("apply old name: %s", stderr)
	}
	if again, err := s.st.GetApplicationByName(ctx, s.team.ID, "clinotes"); err != nil || again.ID == before.ID {
		t.Fatalf("old name: %+v, %v", again, err)
	}
}
