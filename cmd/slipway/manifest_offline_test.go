package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
)

// runOfflineCLI runs the root command in-process and returns stdout, stderr and
// the exit status main would use.
func runOfflineCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	root := newRootCommand()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		code = exitCode(err)
		var ee *exitError
		if !errors.As(err, &ee) && code == 0 {
			t.Fatalf("error without exit status: %v", err)
		}
	}
	return out.String(), errOut.String(), code
}

func offlineFixture(name string) string { return filepath.Join("testdata", "offline", name) }

func TestAppValidate(t *testing.T) {
	t.Parallel()
	out, _, code := runOfflineCLI(t, "app", "validate", "--file", offlineFixture("app.toml"))
	if code != 0 || !strings.Contains(out, "is valid") {
		t.Fatalf("valid manifest: code %d, output %q", code, out)
	}

	out, stderr, code := runOfflineCLI(t, "app", "validate", "--file", offlineFixture("broken.toml"))
	if code != 1 {
		t.Fatalf("invalid manifest: code %d, want 1", code)
	}
	for _, want := range []string{
		"metadata.name: ", "(name_invalid) at line 5 column 1",
		"spec.services[0].replicas: ", "(variable_undeclared) at line 9",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, "2 errors") {
		t.Errorf("stderr = %q", stderr)
	}
}

func TestAppValidate_JSON(t *testing.T) {
	t.Parallel()
	type report struct {
		Valid  bool `json:"valid"`
		Errors []struct {
			Path, Code, Message string
			Line, Column        *int
		} `json:"errors"`
	}
	decodeOne := func(t *testing.T, out string) report {
		t.Helper()
		dec := json.NewDecoder(strings.NewReader(out))
		var r report
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("output is not JSON: %v\n%s", err, out)
		}
		if dec.More() {
			t.Fatalf("output holds more than one JSON value:\n%s", out)
		}
		return r
	}

	out, _, code := runOfflineCLI(t, "app", "validate", "--file", offlineFixture("app.toml"), "--format", "json")
	r := decodeOne(t, out)
	if code != 0 || !r.Valid || r.Errors == nil || len(r.Errors) != 0 {
		t.Fatalf("valid manifest: code %d, report %+v\n%s", code, r, out)
	}
	if !strings.Contains(out, `"errors": []`) {
		t.Errorf("errors is not an empty list:\n%s", out)
	}

	out, _, code = runOfflineCLI(t, "app", "validate", "--file", offlineFixture("unknown-field.toml"), "--format", "json")
	r = decodeOne(t, out)
	if code != 1 || r.Valid || len(r.Errors) != 1 {
		t.Fatalf("unknown field: code %d, report %+v", code, r)
	}
	e := r.Errors[0]
	if e.Path != "metadata.colour" || e.Code != "unknown_field" || e.Line == nil || *e.Line != 6 || e.Column == nil {
		t.Errorf("error = %+v", e)
	}
}

func TestAppRender(t *testing.T) {
	t.Parallel()
	render := func(t *testing.T, args ...string) *manifest.Manifest {
		t.Helper()
		out, stderr, code := runOfflineCLI(t, append([]string{"app", "render", "--file", offlineFixture("app.toml")}, args...)...)
		if code != 0 {
			t.Fatalf("render %q: code %d: %s", args, code, stderr)
		}
		format := "toml"
		for i, a := range args {
			if a == "--format" {
				format = args[i+1]
			}
		}
		m, err := manifest.Decode([]byte(out), format)
		if err != nil {
			t.Fatalf("rendered %s does not decode: %v\n%s", format, err, out)
		}
		return m
	}

	m := render(t, "--env", "production")
	web := m.Spec.Services[0]
	if web.Replicas.N != 3 || web.Replicas.IsRef() {
		t.Errorf("replicas = %+v", web.Replicas)
	}
	if got := m.Spec.Routes[0].Hostname; got != "notes.example.com" {
		t.Errorf("hostname = %q", got)
	}
	// Plans render git.sha as 40 zeros and keep escapes literal.
	if got := web.Environment["REVISION"]; got != "main@"+manifest.PlanGitSHA {
		t.Errorf("REVISION = %q", got)
	}
	if got := web.Environment["TEMPLATE"]; got != "${{ kept }}" {
		t.Errorf("TEMPLATE = %q", got)
	}

	m = render(t, "--env", "staging", "--format", "json", "--var", "web_replicas=5", "--var", "domain=example.org")
	if m.Spec.Services[0].Replicas.N != 5 || m.Spec.Routes[0].Hostname != "example.org" {
		t.Errorf("overrides not applied: replicas %+v, hostname %q", m.Spec.Services[0].Replicas, m.Spec.Routes[0].Hostname)
	}

	m = render(t, "--preview", "feat/login")
	slug := manifest.PreviewSlug("notes", "feat/login", "")
	if got := m.Spec.Routes[0].Hostname; got != slug+".dev.example.com" {
		t.Errorf("preview hostname = %q, want %s.dev.example.com", got, slug)
	}
	if got := m.Spec.Services[0].Replicas.N; got != 1 {
		t.Errorf("preview replicas = %d, want the default", got)
	}
}

func TestAppRender_Errors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "missing value", args: []string{"--env", "qa"}, want: "variable_value_missing"},
		{name: "string for an integer variable", args: []string{"--env", "staging", "--var", "web_replicas=five"}, want: "variable_type_mismatch"},
		{name: "undeclared override", args: []string{"--env", "staging", "--var", "colour=blue"}, want: "variable_undeclared"},
		{name: "malformed override", args: []string{"--env", "staging", "--var", "colour"}, want: "expected name=value"},
		{name: "no environment", args: nil, want: "--env"},
		{name: "bad format", args: []string{"--env", "staging", "--format", "yaml"}, want: "--format"},
		{name: "rendered value invalid", args: []string{"--env", "staging", "--var", "web_replicas=1000"}, want: "spec.services[0].replicas"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, stderr, code := runOfflineCLI(t, append([]string{"app", "render", "--file", offlineFixture("app.toml")}, tt.args...)...)
			if code != 1 {
				t.Fatalf("code %d, want 1; stdout %q", code, out)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Fatalf("stderr lacks %q:\n%s", tt.want, stderr)
			}
		})
	}
}

func TestAppPlan(t *testing.T) {
	t.Parallel()
	out, stderr, code := runOfflineCLI(t, "app", "plan", "--file", offlineFixture("app.toml"), "--against", offlineFixture("old.toml"))
	if code != 0 {
		t.Fatalf("code %d: %s", code, stderr)
	}
	for _, want := range []string{
		"~ services.web.source.type: image -> git",
		"~ production: deploys from releases promoted from staging instead of branch main",
		"+ staging: created, deploys from branch main, follows pushes",
		"! qa: no longer declared; kept until deleted with `slipway env delete`",
		"web: start-first (derived), monitor 30s",
		"(rollback_without_health_check)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "--origin=") {
		t.Errorf("plan shows a command:\n%s", out)
	}

	out, _, code = runOfflineCLI(t, "app", "plan", "--file", offlineFixture("app.toml"), "--format", "json")
	var plan manifest.Plan
	if err := json.Unmarshal([]byte(out), &plan); err != nil || code != 0 {
		t.Fatalf("json plan: code %d, %v\n%s", code, err, out)
	}
	if len(plan.Environments) != 2 || plan.Environments[0].Kind != manifest.EnvironmentCreated {
		t.Errorf("new application environments = %+v", plan.Environments)
	}

	_, _, code = runOfflineCLI(t, "app", "plan", "--file", offlineFixture("broken.toml"))
	if code != 1 {
		t.Errorf("invalid manifest: code %d, want 1", code)
	}
}

func TestSchemaCommand(t *testing.T) {
	t.Parallel()
	out, _, code := runOfflineCLI(t, "schema")
	want, err := manifest.Schema()
	if err != nil || code != 0 {
		t.Fatalf("code %d, %v", code, err)
	}
	if out != string(want) {
		t.Fatal("slipway schema differs from manifest.Schema")
	}
}

// TestOfflineCommands_Examples validates every example, renders it for each
// environment it declares (production when none) and for a preview when it
// has preview settings, and plans it as a new application.
func TestOfflineCommands_Examples(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skip("no examples yet")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			if _, stderr, code := runOfflineCLI(t, "app", "validate", "--file", f); code != 0 {
				t.Fatalf("validate: code %d: %s", code, stderr)
			}
			m, err := manifest.DecodeFile(f)
			if err != nil {
				t.Fatal(err)
			}
			envs := []string{"production"}
			if len(m.Spec.Environments) > 0 {
				envs = envs[:0]
				for name := range m.Spec.Environments {
					envs = append(envs, name)
				}
			}
			for _, env := range envs {
				if _, stderr, code := runOfflineCLI(t, "app", "render", "--file", f, "--env", env); code != 0 {
					t.Errorf("render --env %s: code %d: %s", env, code, stderr)
				}
			}
			if m.Spec.Previews != nil {
				if _, stderr, code := runOfflineCLI(t, "app", "render", "--file", f, "--preview", "feat/login", "--format", "json"); code != 0 {
					t.Errorf("render --preview: code %d: %s", code, stderr)
				}
			}
			if _, stderr, code := runOfflineCLI(t, "app", "plan", "--file", f); code != 0 {
				t.Errorf("plan: code %d: %s", code, stderr)
			}
		})
	}
}
