package main

import (
	"testing"
)

// TestCLI_FieldEdits drives the field-edit verbs against the real app and
// reads what each saved from the database.
func TestCLI_FieldEdits(t *testing.T) {
	s := startCLIServer(t)
	if _, stderr, code := runCLI(t, "app", "apply", "--file", writeManifest(t, cliManifest)); code != 0 {
		t.Fatalf("apply: %s", stderr)
	}
	saved, run, fail := cliEditKit(t, s, "clinotes")

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
