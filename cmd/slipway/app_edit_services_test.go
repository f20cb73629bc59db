package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLI_ServiceAddRemove adds services from flags and from a TOML
// fragment, and removes them, against the real app.
func TestCLI_ServiceAddRemove(t *testing.T) {
	s := startCLIServer(t)
	if _, stderr, code := runCLI(t, "app", "apply", "--file", writeManifest(t, cliManifest)); code != 0 {
		t.Fatalf("apply: %s", stderr)
	}
	saved, run, fail := cliEditKit(t, s, "clinotes")
	fragment := func(doc string) string { return writeFragment(t, doc) }

	run("revision 2", "app", "service", "add", "clinotes", "cache", "--image", "example.com/cache:7", "--replicas", "2", "--env", "SIZE=64m", "--expected-revision", "1")
	fail("service_name_taken", "app", "service", "add", "clinotes", "cache", "--image", "example.com/cache:7")
	fail("source_required", "app", "service", "add", "clinotes", "empty")
	// A [[spec.services]] table copied from a manifest, sub-tables and all.
	run("revision 3", "app", "service", "add", "clinotes", "worker", "--from-file", fragment(`# the queue worker
[[spec.services]]
name = "worker"
depends_on = ["web"]
command = ["worker", "--queue", "default"]
[spec.services.source]
type = "image"
image = "example.com/worker:1"
[spec.services.resources]
memory_bytes = 268435456
`))
	// Its keys alone, with inline tables; flags add to it.
	run("revision 4", "app", "service", "add", "clinotes", "cron", "--env", "TZ=UTC", "--from-file", fragment(`source = { type = "image", image = "example.com/cron:1" }
depends_on = ["worker"]
`))
	fail("name_mismatch", "app", "service", "add", "clinotes", "other", "--from-file", fragment(`name = "cron2"
source = { type = "image", image = "x.example.com/a:1" }
`))
	fail("fragment_invalid", "app", "service", "add", "clinotes", "x", "--from-file", fragment(`source = { type = "image", image = "x.example.com/a:1" }
replicas = "many"
`))
	fail("fragment_invalid", "app", "service", "add", "clinotes", "x", "--from-file", fragment(`[[spec.services]]
name = "x"
[[spec.routes]]
hostname = "x.example.com"
`))
	fail("manifest_validation_failed", "app", "service", "add", "clinotes", "bad", "--image", "example.com/bad:1", "--replicas", "-2")

	m, rev := saved()
	if rev != 4 || len(m.Spec.Services) != 4 {
		t.Fatalf("revision %d services %+v", rev, m.Spec.Services)
	}
	cache, worker, cron := m.Spec.Services[1], m.Spec.Services[2], m.Spec.Services[3]
	if cache.Source.Image != "example.com/cache:7" || cache.Replicas.N != 2 || cache.Environment["SIZE"] != "64m" ||
		worker.Name != "worker" || worker.Resources.MemoryBytes.N != 268435456 || strings.Join(worker.Command, " ") != "worker --queue default" ||
		cron.Name != "cron" || cron.Environment["TZ"] != "UTC" || cron.DependsOn[0] != "worker" {
		t.Fatalf("saved services %+v", m.Spec.Services)
	}

	// A job naming worker refuses its removal, naming the job's path;
	// cron's depends_on does not, and drops worker.
	run("revision 5", "app", "job", "set", "clinotes", "drain", "--service", "worker", "--command", "drain")
	_, stderr, code := runCLI(t, "app", "service", "remove", "clinotes", "worker")
	if code == 0 || !strings.Contains(stderr, "spec.jobs[0].service") || !strings.Contains(stderr, "service_referenced") {
		t.Fatalf("removing a referenced service: exit %d stderr %q", code, stderr)
	}
	run("revision 6", "app", "job", "remove", "clinotes", "drain")
	fail("generation_conflict", "app", "service", "remove", "clinotes", "worker", "--expected-revision", "5")
	run("revision 7", "app", "service", "remove", "clinotes", "worker", "--expected-revision", "6")
	fail("service_unknown", "app", "service", "remove", "clinotes", "worker")
	m, _ = saved()
	if len(m.Spec.Services) != 3 || m.Spec.Services[2].Name != "cron" || m.Spec.Services[2].DependsOn != nil {
		t.Fatalf("after removal %+v", m.Spec.Services)
	}
}

// TestCLI_GeneratedSecretDeclarations declares, re-declares and removes
// generated secrets against the real app.
func TestCLI_GeneratedSecretDeclarations(t *testing.T) {
	s := startCLIServer(t)
	if _, stderr, code := runCLI(t, "app", "apply", "--file", writeManifest(t, cliManifest)); code != 0 {
		t.Fatalf("apply: %s", stderr)
	}
	saved, run, fail := cliEditKit(t, s, "clinotes")

	run("revision 2", "app", "generated-secret", "set", "clinotes", "session")
	run("revision 3", "app", "generated-secret", "declare", "clinotes", "signing", "--type", "rsa")
	run("revision 4", "app", "generated-secret", "set", "clinotes", "session", "--bytes", "64", "--encoding", "base64url", "--expected-revision", "3")
	fail("generation_conflict", "app", "generated-secret", "set", "clinotes", "token", "--expected-revision", "3")
	fail("manifest_validation_failed", "app", "generated-secret", "set", "clinotes", "token", "--type", "rsa", "--bytes", "32")
	m, rev := saved()
	if rev != 4 || len(m.Spec.Secrets) != 2 || m.Spec.Secrets[0].Generate.Bytes != 64 || m.Spec.Secrets[0].Generate.Encoding != "base64url" ||
		m.Spec.Secrets[1].Generate.Type != "rsa" || m.Spec.Secrets[1].Generate.Bits != 3072 {
		t.Fatalf("revision %d secrets %+v", rev, m.Spec.Secrets)
	}

	// Mounted by a service, session can't be undeclared.
	run("revision 5", "app", "service", "add", "clinotes", "api", "--from-file", writeFragment(t, `source = { type = "image", image = "example.com/api:1" }
secrets = [{ name = "session", target = "/run/secrets/session" }]
`))
	_, stderr, code := runCLI(t, "app", "generated-secret", "remove", "clinotes", "session")
	if code == 0 || !strings.Contains(stderr, "spec.services[1].secrets[0].name") || !strings.Contains(stderr, "/run/secrets/session") {
		t.Fatalf("undeclaring a mounted secret: exit %d stderr %q", code, stderr)
	}
	run("revision 6", "app", "generated-secret", "undeclare", "clinotes", "signing")
	fail("secret_declaration_unknown", "app", "generated-secret", "remove", "clinotes", "signing")
	if m, _ := saved(); len(m.Spec.Secrets) != 1 || m.Spec.Secrets[0].Name != "session" {
		t.Fatalf("after removal %+v", m.Spec.Secrets)
	}
}

func writeFragment(t *testing.T, doc string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "service.toml")
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
