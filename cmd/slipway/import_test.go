package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type importRun struct {
	stdout, stderr string
	code           int
}

func runImportCommand(t *testing.T, args ...string) importRun {
	t.Helper()
	cmd := newAppImportCommand()
	var stdout, stderr bytes.Buffer
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	cmd.SetArgs(args)
	cmd.SilenceErrors = true
	cmd.SilenceUsage = true
	code := 0
	if err := cmd.Execute(); err != nil {
		code = exitCode(err)
		stderr.WriteString(err.Error() + "\n")
	}
	return importRun{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const gordonSource = `name = "blog"
[services.web]
image = "gordon.mydomain.com/blog:1.4.2"
stop_grace = "20s"
[services.web.readiness]
type = "http"
path = "/healthz"
port = 3000
contains = "ok"
[[services.web.http]]
host = "blog.mydomain.com"
port = 3000
`

func TestAppImport_ValidWithWarnings(t *testing.T) {
	t.Parallel()
	src := writeTemp(t, "blog.toml", gordonSource)
	r := runImportCommand(t, "--from", "gordon", "--file", src)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"warning: services.web.readiness.contains: ", "warning: services.web.stop_grace: "} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if !strings.Contains(r.stdout, "api_version = 'slipway.dev/v1alpha1'") || strings.Contains(r.stdout, "warning") {
		t.Errorf("stdout is not just the manifest:\n%s", r.stdout)
	}
	validateOutput(t, r.stdout)
}

func TestAppImport_ErrorsExitOne(t *testing.T) {
	t.Parallel()
	src := writeTemp(t, "game.toml", gordonSource+"[[services.web.tcp]]\nport = 25565\n[[services.web.udp]]\nport = 28015\n")
	r := runImportCommand(t, "--from", "gordon", "--file", src)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"error: services.web.tcp: ", "error: services.web.udp: ", "import_incomplete"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}

func TestAppImport_AutoJSON(t *testing.T) {
	t.Parallel()
	src := writeTemp(t, "skali.yaml", "name: hello\napplications:\n  web:\n    image: nginx:1.27\n")
	r := runImportCommand(t, "--from", "auto", "--file", src, "--format", "json", "--name", "greeter")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "detected: skali") {
		t.Errorf("stderr does not say which dialect was chosen:\n%s", r.stderr)
	}
	if !strings.Contains(r.stdout, `"name": "greeter"`) {
		t.Errorf("stdout:\n%s", r.stdout)
	}
}

func TestAppImport_SelfBuildNeedsRepository(t *testing.T) {
	t.Parallel()
	src := writeTemp(t, "skali.yaml", "name: hello\napplications:\n  web:\n    build:\n      context: .\n")
	r := runImportCommand(t, "--from", "skali", "--file", src)
	if r.code != 1 || !strings.Contains(r.stderr, "error: applications.web.build: ") || !strings.Contains(r.stderr, "--repository") {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	r = runImportCommand(t, "--from", "skali", "--file", src, "--repository", "https://git.example.com/acme/hello.git")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	validateOutput(t, r.stdout)
}

func TestAppImport_ComposeAutoDomain(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "shop")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "docker-compose.yml")
	if err := os.WriteFile(src, []byte("services:\n  web:\n    image: nginx:1.27\n    ports: [\"8080:80\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runImportCommand(t, "--from", "auto", "--file", src, "--domain", "shop.example.com")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"detected: compose", `named "shop" (after its directory`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	for _, want := range []string{"name = 'shop'", "hostname = 'shop.example.com'", "port = 80"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	validateOutput(t, r.stdout)
}

// validateOutput runs slipway app validate on an imported manifest.
func validateOutput(t *testing.T, manifestText string) {
	t.Helper()
	out := writeTemp(t, "app.toml", manifestText)
	v := newAppValidateCommand()
	var vout bytes.Buffer
	v.SetOut(&vout)
	v.SetErr(&vout)
	v.SetArgs([]string{"--file", out})
	if err := v.Execute(); err != nil {
		t.Fatalf("app validate rejects the imported manifest: %v\n%s\n%s", err, vout.String(), manifestText)
	}
}

func TestAppImport_BadArguments(t *testing.T) {
	t.Parallel()
	src := writeTemp(t, "x.toml", gordonSource)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown dialect", []string{"--from", "heroku", "--file", src}, "unknown_dialect"},
		{"bad format", []string{"--from", "gordon", "--file", src, "--format", "yaml"}, "format_invalid"},
		{"missing file", []string{"--from", "gordon", "--file", filepath.Join(t.TempDir(), "nope")}, "file_unreadable"},
		{"bad name", []string{"--from", "gordon", "--file", src, "--name", "Not_A_Name"}, "--name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runImportCommand(t, tt.args...)
			if r.code == 0 || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant %q", r.code, r.stderr, tt.want)
			}
		})
	}
}
