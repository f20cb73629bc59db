package manifest

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseTemplate(t *testing.T) {
	t.Parallel()
	ref := func(ns, name string) templatePart { return templatePart{ref: &Reference{Namespace: ns, Name: name}} }
	text := func(s string) templatePart { return templatePart{text: s} }
	tests := []struct {
		name    string
		in      string
		want    []templatePart
		wantErr string
	}{
		{name: "plain text", in: "hello", want: []templatePart{text("hello")}},
		{name: "empty", in: "", want: nil},
		{name: "whole reference", in: "${{ vars.domain }}", want: []templatePart{ref("vars", "domain")}},
		{name: "no inner whitespace", in: "${{vars.domain}}", want: []templatePart{ref("vars", "domain")}},
		{name: "tabs and extra spaces", in: "${{ \t vars.web_replicas   }}", want: []templatePart{ref("vars", "web_replicas")}},
		{name: "mixed text", in: "https://${{ env.slug }}.dev.example.com", want: []templatePart{text("https://"), ref("env", "slug"), text(".dev.example.com")}},
		{name: "two references", in: "${{ app.name }}-${{ env.name }}", want: []templatePart{ref("app", "name"), text("-"), ref("env", "name")}},
		{name: "escape", in: "$${{ vars.x }}", want: []templatePart{text("${{ vars.x }}")}},
		{name: "escape then reference", in: "$${{ a }} ${{ vars.b }}", want: []templatePart{text("${{ a }} "), ref("vars", "b")}},
		{name: "dollar before reference", in: "$$${{ vars.b }}", want: []templatePart{text("$${{ vars.b }}")}},
		{name: "shell variables are text", in: "${HOME}/$USER $ {{x}}", want: []templatePart{text("${HOME}/$USER $ {{x}}")}},
		{name: "swarm template is text", in: "{{.Service.Name}}", want: []templatePart{text("{{.Service.Name}}")}},
		{name: "hyphenated name", in: "${{ vars.auth-env }}", want: []templatePart{ref("vars", "auth-env")}},
		{name: "unterminated", in: "x ${{ vars.a", wantErr: "no closing }}"},
		{name: "no dot", in: "${{ domain }}", wantErr: "expected namespace.name"},
		{name: "empty reference", in: "${{ }}", wantErr: "expected namespace.name"},
		{name: "two dots", in: "${{ vars.a.b }}", wantErr: "must start with a letter"},
		{name: "operator", in: "${{ vars.a + 1 }}", wantErr: "must start with a letter"},
		{name: "function call", in: "${{ upper(vars.a) }}", wantErr: "namespace"},
		{name: "uppercase namespace", in: "${{ VARS.a }}", wantErr: "namespace"},
		{name: "name starting with digit", in: "${{ vars.1a }}", wantErr: "must start with a letter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseTemplate(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseTemplate(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseTemplate(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("parseTemplate(%q) = %#v, want %#v", tt.in, got, tt.want)
			}
		})
	}
}

func TestContainsReference(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"", false},
		{"plain", false},
		{"${HOME}", false},
		{"${{ vars.a }}", true},
		{"x${{vars.a}}", true},
		{"$${{ vars.a }}", false},
		{"$$${{ vars.a }}", false}, // a literal "$", then an escape
		{"$${{ a }} then ${{ vars.b }}", true},
		{"${{ broken", true},
	}
	for _, tt := range tests {
		if got := ContainsReference(tt.in); got != tt.want {
			t.Errorf("ContainsReference(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestWholeReference(t *testing.T) {
	t.Parallel()
	if r, ok := wholeReference("${{ vars.n }}"); !ok || r != (Reference{"vars", "n"}) {
		t.Fatalf("wholeReference = %v %v", r, ok)
	}
	for _, s := range []string{" ${{ vars.n }}", "${{ vars.n }}x", "${{ vars.a }}${{ vars.b }}", "$${{ vars.n }}", "3"} {
		if _, ok := wholeReference(s); ok {
			t.Errorf("wholeReference(%q) = true, want false", s)
		}
	}
}

func TestValidVariableName(t *testing.T) {
	t.Parallel()
	valid := []string{"a", "_a", "A", "web_replicas", "auth-env", "x9", strings.Repeat("a", 63)}
	invalid := []string{"", "9a", "-a", "a.b", "a b", "é", strings.Repeat("a", 64)}
	for _, n := range valid {
		if !validVariableName(n) {
			t.Errorf("validVariableName(%q) = false, want true", n)
		}
	}
	for _, n := range invalid {
		if validVariableName(n) {
			t.Errorf("validVariableName(%q) = true, want false", n)
		}
	}
}

// baseManifest is a small valid application the reference tests edit.
func baseManifest() *Manifest {
	return &Manifest{
		APIVersion: APIVersion,
		Kind:       Kind,
		Metadata:   Metadata{Name: "notes"},
		Spec: Spec{
			Services: []Service{{
				Name:   "web",
				Source: Source{Type: SourceImage, Image: "ghcr.io/example/notes:1.4.0"},
			}},
			Variables: map[string]Value{"domain": StringValue("notes.example.com"), "web_replicas": IntValue(1)},
		},
	}
}

func TestValidateReferences(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		edit     func(m *Manifest)
		wantPath string
		wantCode string
	}{
		{name: "valid environment value", edit: func(m *Manifest) {
			m.Spec.Services[0].Environment = map[string]string{"HOST": "${{ vars.domain }}", "APP": "${{ app.name }}-${{ env.slug }}"}
		}},
		{name: "valid replicas reference", edit: func(m *Manifest) {
			m.Spec.Services[0].Replicas = &Int{Ref: "${{ vars.web_replicas }}"}
		}},
		{name: "variable declared only in an environment", edit: func(m *Manifest) {
			m.Spec.Environments = map[string]EnvironmentBlock{"staging": {Variables: map[string]Value{"only_here": StringValue("x")}}}
			m.Spec.Services[0].Command = []string{"serve", "--name=${{ vars.only_here }}"}
		}},
		{name: "variable declared only for previews", edit: func(m *Manifest) {
			m.Spec.Previews = &Previews{Variables: map[string]Value{"pv": StringValue("${{ env.slug }}.dev.example.com")}}
			m.Spec.Routes = []Route{{Hostname: "${{ vars.pv }}", Service: "web", Port: 80}}
		}},
		{name: "escaped reference anywhere", edit: func(m *Manifest) {
			m.Spec.Services[0].Environment = map[string]string{"TEMPLATE": "$${{ not.a_reference }}"}
		}},
		{name: "all allowed fields", edit: func(m *Manifest) {
			svc := &m.Spec.Services[0]
			svc.Source.Image = "ghcr.io/example/${{ vars.domain }}:1"
			svc.Arguments = []string{"${{ deployment.id }}"}
			svc.Healthcheck = &Healthcheck{Type: HealthcheckHTTP, Port: &Int{Ref: "${{ vars.web_replicas }}"}, Path: "/${{ vars.domain }}",
				IntervalSeconds: &Int{Ref: "${{vars.web_replicas}}"}, TimeoutSeconds: &Int{Ref: "${{ vars.web_replicas }}"},
				StartPeriodSeconds: &Int{Ref: "${{ vars.web_replicas }}"}, Retries: &Int{Ref: "${{ vars.web_replicas }}"}}
			svc.Resources = &Resources{CPUMillis: &Int{Ref: "${{ vars.web_replicas }}"}, MemoryBytes: &Int{Ref: "${{ vars.web_replicas }}"}}
			svc.Rollout = &Rollout{Order: "${{ vars.domain }}", MonitorSeconds: &Int{Ref: "${{ vars.web_replicas }}"}}
			svc.Secrets = []SecretMount{{Name: "${{ vars.domain }}", Target: "/run/secrets/x"}}
			m.Spec.Services = append(m.Spec.Services, Service{Name: "api", Source: Source{Type: SourceGit,
				Repository: &Repository{URL: "https://example.com/a.git"},
				Build: &Build{Type: "docker", Dockerfile: "${{ vars.domain }}/Dockerfile", Context: "${{ vars.domain }}",
					Args: map[string]string{"ORIGIN": "https://${{ vars.domain }}"}, Target: "${{ vars.domain }}"}}})
			m.Spec.Routes = []Route{{Hostname: "www.${{ vars.domain }}", Redirect: &Redirect{To: "https://${{ vars.domain }}"}}}
			m.Spec.Jobs = []Job{{Name: "migrate", Service: "web", Command: []string{"migrate", "${{ env.name }}"},
				Environment: map[string]string{"X": "${{ vars.domain }}"}, TimeoutSeconds: &Int{Ref: "${{ vars.web_replicas }}"}}}
			m.Spec.Imports = []Import{{Application: "auth", Service: "api", Environment: "${{ vars.domain }}"}}
		}},
		{name: "undeclared variable", edit: func(m *Manifest) {
			m.Spec.Services[0].Environment = map[string]string{"HOST": "${{ vars.nope }}"}
		}, wantPath: "spec.services[0].environment.HOST", wantCode: "variable_undeclared"},
		{name: "undeclared in replicas", edit: func(m *Manifest) {
			m.Spec.Services[0].Replicas = &Int{Ref: "${{ vars.nope }}"}
		}, wantPath: "spec.services[0].replicas", wantCode: "variable_undeclared"},
		{name: "unknown namespace", edit: func(m *Manifest) {
			m.Spec.Services[0].Command = []string{"${{ foo.bar }}"}
		}, wantPath: "spec.services[0].command[0]", wantCode: "variable_reference_unknown"},
		{name: "unknown system variable", edit: func(m *Manifest) {
			m.Spec.Services[0].Command = []string{"${{ env.id }}"}
		}, wantPath: "spec.services[0].command[0]", wantCode: "variable_reference_unknown"},
		{name: "secrets namespace reserved", edit: func(m *Manifest) {
			m.Spec.Services[0].Environment = map[string]string{"PW": "${{ secrets.db }}"}
		}, wantPath: "spec.services[0].environment.PW", wantCode: "variable_reference_reserved"},
		{name: "git without spec.manifest", edit: func(m *Manifest) {
			m.Spec.Services[0].Environment = map[string]string{"SHA": "${{ git.sha }}"}
		}, wantPath: "spec.services[0].environment.SHA", wantCode: "variable_reference_unavailable"},
		{name: "git with spec.manifest", edit: func(m *Manifest) {
			m.Spec.Manifest = &ManifestSource{Path: "app.toml", Repository: &Repository{URL: "https://example.com/r.git", Branch: "main"}}
			m.Spec.Services[0].Environment = map[string]string{"SHA": "${{ git.sha }}", "BRANCH": "${{ git.branch }}"}
		}},
		{name: "malformed reference", edit: func(m *Manifest) {
			m.Spec.Services[0].Arguments = []string{"ok", "${{ vars.domain"}
		}, wantPath: "spec.services[0].arguments[1]", wantCode: "variable_reference_invalid"},
		{name: "integer field with text", edit: func(m *Manifest) {
			m.Spec.Services[0].Replicas = &Int{Ref: "3"}
		}, wantPath: "spec.services[0].replicas", wantCode: "variable_reference_invalid"},
		{name: "integer field with mixed text", edit: func(m *Manifest) {
			m.Spec.Services[0].Replicas = &Int{Ref: "${{ vars.web_replicas }}0"}
		}, wantPath: "spec.services[0].replicas", wantCode: "variable_reference_invalid"},
		{name: "service name", edit: func(m *Manifest) {
			m.Spec.Services[0].Name = "${{ vars.domain }}"
		}, wantPath: "spec.services[0].name", wantCode: "variable_reference_forbidden"},
		{name: "application name", edit: func(m *Manifest) {
			m.Metadata.Name = "${{ vars.domain }}"
		}, wantPath: "metadata.name", wantCode: "variable_reference_forbidden"},
		{name: "source type", edit: func(m *Manifest) {
			m.Spec.Services[0].Source.Type = "${{ vars.domain }}"
		}, wantPath: "spec.services[0].source.type", wantCode: "variable_reference_forbidden"},
		{name: "environment key", edit: func(m *Manifest) {
			m.Spec.Services[0].Environment = map[string]string{"${{ vars.domain }}": "x"}
		}, wantPath: "spec.services[0].environment.${{ vars.domain }}", wantCode: "variable_reference_forbidden"},
		{name: "mount target", edit: func(m *Manifest) {
			m.Spec.Services[0].Mounts = []Mount{{Volume: "data", Target: "/data/${{ vars.domain }}"}}
		}, wantPath: "spec.services[0].mounts[0].target", wantCode: "variable_reference_forbidden"},
		{name: "secret mount target", edit: func(m *Manifest) {
			m.Spec.Services[0].Secrets = []SecretMount{{Name: "db", Target: "/run/secrets/${{ vars.domain }}"}}
		}, wantPath: "spec.services[0].secrets[0].target", wantCode: "variable_reference_forbidden"},
		{name: "file path", edit: func(m *Manifest) {
			m.Spec.Services[0].Files = []File{{Target: "/etc/x", Path: "${{ vars.domain }}.yaml"}}
		}, wantPath: "spec.services[0].files[0].path", wantCode: "variable_reference_forbidden"},
		{name: "file content is never rendered nor rejected", edit: func(m *Manifest) {
			m.Spec.Services[0].Files = []File{{Target: "/etc/x", Content: "${{ vars.nope }} and ${{ broken"}}
		}},
		{name: "git repository", edit: func(m *Manifest) {
			m.Spec.Services[0].Source = Source{Type: SourceGit, Repository: &Repository{URL: "https://${{ vars.domain }}/r.git"}, Build: &Build{Type: "docker"}}
		}, wantPath: "spec.services[0].source.repository.url", wantCode: "variable_reference_forbidden"},
		{name: "spec.secrets declaration", edit: func(m *Manifest) {
			m.Spec.Secrets = []SecretDeclaration{{Name: "${{ vars.domain }}", Generate: Generate{Type: GenerateRandom, Bytes: 32}}}
		}, wantPath: "spec.secrets[0].name", wantCode: "variable_reference_forbidden"},
		{name: "spec.manifest", edit: func(m *Manifest) {
			m.Spec.Manifest = &ManifestSource{Path: "${{ vars.domain }}", Repository: &Repository{URL: "https://example.com/r.git"}}
		}, wantPath: "spec.manifest.path", wantCode: "variable_reference_forbidden"},
		{name: "route name", edit: func(m *Manifest) {
			m.Spec.Routes = []Route{{Name: "${{ vars.domain }}", Hostname: "a.example.com", Service: "web", Port: 80}}
		}, wantPath: "spec.routes[0].name", wantCode: "variable_reference_forbidden"},
		{name: "route service", edit: func(m *Manifest) {
			m.Spec.Routes = []Route{{Hostname: "a.example.com", Service: "${{ vars.domain }}", Port: 80}}
		}, wantPath: "spec.routes[0].service", wantCode: "variable_reference_forbidden"},
		{name: "environment block branch", edit: func(m *Manifest) {
			m.Spec.Environments = map[string]EnvironmentBlock{"staging": {Branch: "${{ vars.domain }}"}}
		}, wantPath: "spec.environments.staging.branch", wantCode: "variable_reference_forbidden"},
		{name: "import application", edit: func(m *Manifest) {
			m.Spec.Imports = []Import{{Application: "${{ vars.domain }}", Service: "api"}}
		}, wantPath: "spec.imports[0].application", wantCode: "variable_reference_forbidden"},
		{name: "export applications", edit: func(m *Manifest) {
			m.Spec.Exports = []Export{{Service: "web", Applications: []string{"${{ vars.domain }}"}}}
		}, wantPath: "spec.exports[0].applications[0]", wantCode: "variable_reference_forbidden"},
		{name: "depends_on", edit: func(m *Manifest) {
			m.Spec.Services[0].DependsOn = []string{"${{ vars.domain }}"}
		}, wantPath: "spec.services[0].depends_on[0]", wantCode: "variable_reference_forbidden"},
		{name: "job service", edit: func(m *Manifest) {
			m.Spec.Jobs = []Job{{Name: "j", Service: "${{ vars.domain }}"}}
		}, wantPath: "spec.jobs[0].service", wantCode: "variable_reference_forbidden"},
		{name: "variable name invalid", edit: func(m *Manifest) {
			m.Spec.Variables["9lives"] = IntValue(9)
		}, wantPath: "spec.variables.9lives", wantCode: "variable_name_invalid"},
		{name: "environment variable name invalid", edit: func(m *Manifest) {
			m.Spec.Environments = map[string]EnvironmentBlock{"prod": {Variables: map[string]Value{"a.b": IntValue(1)}}}
		}, wantPath: "spec.environments.prod.variables.a.b", wantCode: "variable_name_invalid"},
		{name: "string value too large", edit: func(m *Manifest) {
			m.Spec.Variables["big"] = StringValue(strings.Repeat("x", 65537))
		}, wantPath: "spec.variables.big", wantCode: "variable_value_invalid"},
		{name: "string value at the limit", edit: func(m *Manifest) {
			m.Spec.Variables["big"] = StringValue(strings.Repeat("x", 65536))
		}},
		{name: "value referencing system variable", edit: func(m *Manifest) {
			m.Spec.Variables["auth_env"] = StringValue("${{ env.name }}")
		}},
		{name: "value referencing another variable", edit: func(m *Manifest) {
			m.Spec.Previews = &Previews{Variables: map[string]Value{"host": StringValue("api.${{ vars.domain }}")}}
		}, wantPath: "spec.previews.variables.host", wantCode: "variable_value_invalid"},
		{name: "value with unknown system variable", edit: func(m *Manifest) {
			m.Spec.Variables["x"] = StringValue("${{ env.nope }}")
		}, wantPath: "spec.variables.x", wantCode: "variable_reference_unknown"},
		{name: "value with malformed reference", edit: func(m *Manifest) {
			m.Spec.Variables["x"] = StringValue("${{ env.name")
		}, wantPath: "spec.variables.x", wantCode: "variable_reference_invalid"},
		{name: "unset value", edit: func(m *Manifest) {
			m.Spec.Variables["x"] = Value{}
		}, wantPath: "spec.variables.x", wantCode: "variable_value_invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := baseManifest()
			tt.edit(m)
			errs := ValidateReferences(m)
			if tt.wantCode == "" {
				if len(errs) != 0 {
					t.Fatalf("ValidateReferences: unexpected errors: %v", errs)
				}
				return
			}
			if len(errs) != 1 {
				t.Fatalf("ValidateReferences: got %d errors %v, want exactly one %s at %s", len(errs), errs, tt.wantCode, tt.wantPath)
			}
			if errs[0].Path != tt.wantPath || errs[0].Code != tt.wantCode {
				t.Fatalf("ValidateReferences = %s %s (%s), want %s %s", errs[0].Path, errs[0].Code, errs[0].Message, tt.wantPath, tt.wantCode)
			}
			if errs[0].Message == "" {
				t.Fatal("error has no message")
			}
		})
	}
}

func TestValidateReferences_ReportsEvery(t *testing.T) {
	t.Parallel()
	m := baseManifest()
	m.Spec.Services[0].Name = "${{ vars.domain }}"
	m.Spec.Services[0].Environment = map[string]string{"A": "${{ vars.a }}", "B": "${{ vars.b }} ${{ secrets.c }}"}
	errs := ValidateReferences(m)
	var codes []string
	for _, e := range errs {
		codes = append(codes, e.Path+" "+e.Code)
	}
	want := []string{
		"spec.services[0].name variable_reference_forbidden",
		"spec.services[0].environment.A variable_undeclared",
		"spec.services[0].environment.B variable_undeclared",
		"spec.services[0].environment.B variable_reference_reserved",
	}
	if !reflect.DeepEqual(codes, want) {
		t.Fatalf("errors = %q, want %q", codes, want)
	}
}
