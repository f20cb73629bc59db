package manifest

import (
	"reflect"
	"strings"
	"testing"
)

// renderManifest declares per-environment and preview variables the way the
// spec's Variables and Previews sections do.
func renderManifest() *Manifest {
	return &Manifest{
		APIVersion: APIVersion,
		Kind:       Kind,
		Metadata:   Metadata{Name: "notes"},
		Spec: Spec{
			Services: []Service{{
				Name:        "web",
				Source:      Source{Type: SourceImage, Image: "ghcr.io/example/notes:1.4.0"},
				Replicas:    &Int{Ref: "${{ vars.web_replicas }}"},
				Environment: map[string]string{"ORIGIN": "https://${{ vars.domain }}", "AUTH_ENV": "${{ vars.auth_env }}", "LITERAL": "$${{ vars.domain }} ${HOME}"},
				Command:     []string{"notes", "--app=${{ app.name }}", "--deployment=${{ deployment.id }}"},
				Files:       []File{{Target: "/etc/app/motd", Content: "hello ${{ vars.domain }}"}},
				Secrets:     []SecretMount{{Name: "${{ vars.stripe_key }}", Target: "/run/secrets/stripe"}},
			}},
			Routes: []Route{{Name: "web", Hostname: "${{ vars.domain }}", Service: "web", Port: 3000}},
			Variables: map[string]Value{
				"web_replicas": IntValue(1),
				"auth_env":     StringValue("${{ env.name }}"),
				"stripe_key":   StringValue("stripe-test"),
			},
			Environments: map[string]EnvironmentBlock{
				"staging":    {Variables: map[string]Value{"domain": StringValue("staging.notes.example.com")}},
				"production": {Variables: map[string]Value{"domain": StringValue("notes.example.com"), "web_replicas": IntValue(3), "stripe_key": StringValue("stripe-live")}},
			},
			Previews: &Previews{Variables: map[string]Value{"domain": StringValue("${{ env.slug }}.dev.example.com"), "auth_env": StringValue("staging")}},
		},
	}
}

func TestRender_Environment(t *testing.T) {
	t.Parallel()
	m := renderManifest()
	out, errs := Render(m, RenderContext{Environment: "production", DeploymentID: "d-42"})
	if len(errs) != 0 {
		t.Fatalf("Render: %v", errs)
	}
	svc := out.Spec.Services[0]
	if got := svc.Replicas; got == nil || got.N != 3 || got.Ref != "" {
		t.Errorf("replicas = %+v, want the environment's 3", got)
	}
	wantEnv := map[string]string{"ORIGIN": "https://notes.example.com", "AUTH_ENV": "production", "LITERAL": "${{ vars.domain }} ${HOME}"}
	if !reflect.DeepEqual(svc.Environment, wantEnv) {
		t.Errorf("environment = %v, want %v", svc.Environment, wantEnv)
	}
	if want := []string{"notes", "--app=notes", "--deployment=d-42"}; !reflect.DeepEqual(svc.Command, want) {
		t.Errorf("command = %q, want %q", svc.Command, want)
	}
	if svc.Secrets[0].Name != "stripe-live" {
		t.Errorf("secret name = %q, want stripe-live", svc.Secrets[0].Name)
	}
	if got := out.Spec.Routes[0].Hostname; got != "notes.example.com" {
		t.Errorf("hostname = %q", got)
	}
	if got := svc.Files[0].Content; got != "hello ${{ vars.domain }}" {
		t.Errorf("file content was rendered: %q", got)
	}
	// The input is untouched.
	if m.Spec.Services[0].Replicas.Ref == "" || m.Spec.Services[0].Environment["ORIGIN"] != "https://${{ vars.domain }}" || m.Spec.Routes[0].Hostname != "${{ vars.domain }}" {
		t.Error("Render changed its input")
	}
}

func TestRender_DefaultsAndOverrides(t *testing.T) {
	t.Parallel()
	m := renderManifest()
	out, errs := Render(m, RenderContext{Environment: "staging", DeploymentID: "d", Overrides: map[string]Value{"stripe_key": StringValue("override")}})
	if len(errs) != 0 {
		t.Fatalf("Render: %v", errs)
	}
	if got := out.Spec.Services[0].Replicas; got.N != 1 {
		t.Errorf("replicas = %d, want default 1", got.N)
	}
	if got := out.Spec.Services[0].Secrets[0].Name; got != "override" {
		t.Errorf("secret = %q, want the override", got)
	}
}

func TestRender_Preview(t *testing.T) {
	t.Parallel()
	m := renderManifest()
	// A preview named like an environment still never uses its block.
	out, errs := Render(m, RenderContext{Environment: "production", Preview: true, Slug: "notes-feat-login-3fa2c1", DeploymentID: "d"})
	if len(errs) != 0 {
		t.Fatalf("Render: %v", errs)
	}
	if got := out.Spec.Routes[0].Hostname; got != "notes-feat-login-3fa2c1.dev.example.com" {
		t.Errorf("hostname = %q", got)
	}
	if got := out.Spec.Services[0].Replicas.N; got != 1 {
		t.Errorf("replicas = %d, want the default, not production's", got)
	}
	if got := out.Spec.Services[0].Environment["AUTH_ENV"]; got != "staging" {
		t.Errorf("AUTH_ENV = %q", got)
	}
	if got := out.Spec.Services[0].Secrets[0].Name; got != "stripe-test" {
		t.Errorf("secret = %q, want the default", got)
	}
}

func TestRender_Missing(t *testing.T) {
	t.Parallel()
	m := renderManifest()
	_, errs := Render(m, RenderContext{Environment: "qa", DeploymentID: "d"})
	var got []string
	for _, e := range errs {
		got = append(got, e.Path+" "+e.Code)
		if e.Code == "variable_value_missing" && (!strings.Contains(e.Message, "environment qa") || !strings.Contains(e.Message, "vars.domain") || !strings.Contains(e.Message, e.Path)) {
			t.Errorf("message %q does not name the environment, variable and field", e.Message)
		}
	}
	want := []string{
		"spec.services[0].environment.ORIGIN variable_value_missing",
		"spec.routes[0].hostname variable_value_missing",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("errors = %q, want %q", got, want)
	}

	// A system variable without a value is missing too.
	_, errs = Render(m, RenderContext{Environment: "production"})
	if len(errs) != 1 || errs[0].Code != "variable_value_missing" || errs[0].Path != "spec.services[0].command[2]" {
		t.Fatalf("errors without deployment.id = %v", errs)
	}
}

func TestRender_Types(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		value    Value
		wantN    int64
		wantCode string
	}{
		{name: "integer", value: IntValue(7), wantN: 7},
		{name: "numeric string is not parsed", value: StringValue("7"), wantCode: "variable_type_mismatch"},
		{name: "boolean", value: BoolValue(true), wantCode: "variable_type_mismatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := baseManifest()
			m.Spec.Variables["n"] = tt.value
			m.Spec.Services[0].Replicas = &Int{Ref: "${{ vars.n }}"}
			m.Spec.Services[0].Environment = map[string]string{"N": "${{ vars.n }}", "MIXED": "n=${{ vars.n }}"}
			out, errs := Render(m, RenderContext{Environment: "production"})
			if tt.wantCode != "" {
				if len(errs) != 1 || errs[0].Code != tt.wantCode || errs[0].Path != "spec.services[0].replicas" {
					t.Fatalf("errors = %v, want one %s at replicas", errs, tt.wantCode)
				}
				return
			}
			if len(errs) != 0 {
				t.Fatalf("Render: %v", errs)
			}
			if out.Spec.Services[0].Replicas.N != tt.wantN {
				t.Errorf("replicas = %d", out.Spec.Services[0].Replicas.N)
			}
			// Non-integer fields get the value as text.
			if got := out.Spec.Services[0].Environment; got["N"] != "7" || got["MIXED"] != "n=7" {
				t.Errorf("environment = %v", got)
			}
		})
	}
}

func TestRender_NotEvaluatedTwice(t *testing.T) {
	t.Parallel()
	m := baseManifest()
	m.Spec.Environments = map[string]EnvironmentBlock{"production": {Variables: map[string]Value{"domain": StringValue("$${{ vars.domain }}")}}}
	m.Spec.Services[0].Environment = map[string]string{"X": "${{ vars.domain }}"}
	// The variable's value is itself rendered once (its escape becomes a
	// literal ${{), and the substituted text is never scanned again.
	m.Spec.Variables["raw"] = IntValue(1)
	out, errs := Render(m, RenderContext{Environment: "production"})
	if len(errs) != 0 {
		t.Fatalf("Render: %v", errs)
	}
	if got := out.Spec.Services[0].Environment["X"]; got != "${{ vars.domain }}" {
		t.Fatalf("X = %q, want the literal text", got)
	}
}

func TestRender_Git(t *testing.T) {
	t.Parallel()
	m := baseManifest()
	m.Spec.Manifest = &ManifestSource{Path: "app.toml", Repository: &Repository{URL: "https://example.com/r.git", Branch: "main"}}
	m.Spec.Services[0].Environment = map[string]string{"REV": "${{ git.branch }}@${{ git.sha }}"}
	out, errs := Render(m, RenderContext{Environment: "production", GitBranch: "main", GitSHA: PlanGitSHA})
	if len(errs) != 0 {
		t.Fatalf("Render: %v", errs)
	}
	if got := out.Spec.Services[0].Environment["REV"]; got != "main@"+PlanGitSHA {
		t.Fatalf("REV = %q", got)
	}
}

func TestScope(t *testing.T) {
	t.Parallel()
	got := Scope(renderManifest(), RenderContext{Environment: "production", DeploymentID: "d-1"})
	want := map[string]any{
		"app.name":          "notes",
		"env.name":          "production",
		"env.slug":          "production",
		"deployment.id":     "d-1",
		"vars.web_replicas": int64(3),
		"vars.auth_env":     "production",
		"vars.stripe_key":   "stripe-live",
		"vars.domain":       "notes.example.com",
	}
	gotI := map[string]any{}
	for k, v := range got {
		gotI[k] = v.Interface()
	}
	if !reflect.DeepEqual(gotI, want) {
		t.Fatalf("Scope = %v, want %v", gotI, want)
	}
}

// TestRender_NoReferenceLeft checks that no reference is left in any field
// that accepts them.
func TestRender_NoReferenceLeft(t *testing.T) {
	t.Parallel()
	m := renderManifest()
	out, errs := Render(m, RenderContext{Environment: "production", DeploymentID: "d"})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	walkFields(out, func(f *field) {
		if f.kind == fieldInt && f.num.IsRef() {
			t.Errorf("%s still holds %q", f.path, f.num.Ref)
		}
		// LITERAL holds an escape, which renders to a literal "${{".
		if f.kind == fieldString && f.allowed && ContainsReference(f.value) && !strings.HasSuffix(f.path, ".LITERAL") {
			t.Errorf("%s still holds %q", f.path, f.value)
		}
	})
}

// A manifest fetched from a repository may omit spec.manifest; the commit it
// was read from still renders.
func TestRender_GitWithoutManifestSection(t *testing.T) {
	t.Parallel()
	m := baseManifest()
	m.Spec.Services[0].Environment = map[string]string{"REV": "${{ git.sha }}"}
	if errs := ValidateReferences(m); len(errs) != 1 || errs[0].Code != "variable_reference_unavailable" {
		t.Fatalf("ValidateReferences = %v", errs)
	}
	if errs := ValidateReferencesFor(m, true); len(errs) != 0 {
		t.Fatalf("ValidateReferencesFor(repository-backed) = %v", errs)
	}
	out, errs := Render(m, RenderContext{Environment: "production", GitBranch: "main", GitSHA: "0123456789012345678901234567890123456789"})
	if len(errs) != 0 {
		t.Fatalf("Render: %v", errs)
	}
	if got := out.Spec.Services[0].Environment["REV"]; got != "0123456789012345678901234567890123456789" {
		t.Fatalf("REV = %q", got)
	}
	if _, errs := Render(m, RenderContext{Environment: "production"}); len(errs) != 1 || errs[0].Code != "variable_reference_unavailable" {
		t.Fatalf("Render without a commit: %v", errs)
	}
}
