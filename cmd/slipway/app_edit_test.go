package main

import (
	"context"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
)

// TestCLI_FieldEdits drives the field-edit verbs against the real app and
// reads what each saved from the database.
func TestCLI_FieldEdits(t *testing.T) {
	s := startCLIServer(t)
	ctx := context.Background()
	if _, stderr, code := runCLI(t, "app", "apply", "--file", writeManifest(t, cliManifest)); code != 0 {
		t.Fatalf("apply: %s", stderr)
	}
	saved := func() (*manifest.Manifest, int64) {
		t.Helper()
		a, err := s.st.GetApplicationByName(ctx, s.team.ID, "clinotes")
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
	run := func(wantOut string, args ...string) {
		t.Helper()
		stdout, stderr, code := runCLI(t, args...)
		if code != 0 || !strings.Contains(stdout, wantOut) {
			t.Fatalf("%v: exit %d stdout %q stderr %q", args, code, stdout, stderr)
		}
	}
	fail := func(wantErr string, args ...string) {
		t.Helper()
		_, stderr, code := runCLI(t, args...)
		if code == 0 || !strings.Contains(stderr, wantErr) {
			t.Fatalf("%v: exit %d stderr %q, want %s", args, code, stderr, wantErr)
		}
	}

	run("application clinotes: revision 2", "app", "variable", "set", "clinotes", "colour", "blue")
	run("revision 3", "app", "variable", "set", "clinotes", "web_replicas", "2", "--type", "integer", "--env", "staging", "--expected-revision", "2")
	fail("generation_conflict", "app", "variable", "set", "clinotes", "colour", "red", "--expected-revision", "2")
	fail("environment_unknown", "app", "variable", "set", "clinotes", "colour", "red", "--env", "nowhere")
	fail("variable_type_mismatch", "app", "variable", "set", "clinotes", "n", "five", "--type", "integer")
	run("revision 4", "app", "service", "set", "clinotes", "web", "--replicas", "3", "--image", "example.com/notes:2", "--env", "LOG=debug")
	fail("manifest_validation_failed", "app", "service", "set", "clinotes", "web", "--replicas", "-1")
	fail("nothing_to_change", "app", "service", "set", "clinotes", "web")
	run("revision 5", "app", "service", "rename", "clinotes", "web", "frontend")
	run("revision 6", "app", "variable", "unset", "clinotes", "colour")

	m, rev := saved()
	svc := m.Spec.Services[0]
	if rev != 6 || svc.Name != "frontend" || svc.Replicas.N != 3 || svc.Source.Image != "example.com/notes:2" || svc.Environment["LOG"] != "debug" ||
		len(m.Spec.Variables) != 0 || m.Spec.Environments["staging"].Variables["web_replicas"].Interface() != int64(2) {
		t.Fatalf("saved revision %d: %+v", rev, m.Spec)
	}
}
