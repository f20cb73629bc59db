package manifest_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/slipwayhq/slipway/manifest"
)

const header = "api_version = \"slipway.dev/v1alpha1\"\nkind = \"Application\"\n[metadata]\nname = \"notes\"\n"

// wantError is the part of a FieldError a test pins; zero fields are not
// compared, and message must be a substring.
type wantError struct {
	path, code, message string
	line, column        int
}

func decodeErrors(t *testing.T, data, format string) manifest.Errors {
	t.Helper()
	m, err := manifest.Decode([]byte(data), format)
	if err == nil {
		t.Fatalf("Decode succeeded, want an error; got %+v", m)
	}
	var errs manifest.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Decode error is %T (%v), want manifest.Errors", err, err)
	}
	return errs
}

func matchErrors(t *testing.T, got manifest.Errors, want []wantError) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%s", len(got), len(want), manifest.FormatText(got))
	}
	for i, w := range want {
		g := got[i]
		if g.Path != w.path || g.Code != w.code || !strings.Contains(g.Message, w.message) ||
			(w.line != 0 && g.Line != w.line) || (w.column != 0 && g.Column != w.column) {
			t.Errorf("error %d = %s\nwant path %q code %q message containing %q at %d:%d", i, g.Error(), w.path, w.code, w.message, w.line, w.column)
		}
	}
}

func TestDecode_TOMLErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		doc  string
		want []wantError
	}{
		{
			name: "unknown top-level field",
			doc:  header + "\nroutes = []\n",
			want: []wantError{{path: "metadata.routes", code: "unknown_field", message: "unknown field `routes`", line: 6, column: 1}},
		},
		{
			name: "unknown fields in the second service, all reported",
			doc: header + "[[spec.services]]\nname = \"a\"\n[spec.services.source]\ntype = \"image\"\nimage = \"x\"\n" +
				"[[spec.services]]\nname = \"b\"\nport = 80\nhostname = \"x\"\n",
			want: []wantError{
				{path: "spec.services[1].port", code: "unknown_field", message: "expected one of name, source, replicas", line: 12, column: 1},
				{path: "spec.services[1].hostname", code: "unknown_field", line: 13, column: 1},
			},
		},
		{
			name: "wrong type quotes the value",
			doc:  header + "[[spec.routes]]\nhostname = \"a.example.com\"\nservice = \"web\"\nport = \"eighty\"\n",
			want: []wantError{{path: "spec.routes[0].port", code: "type_mismatch", message: `expected an integer, got string "eighty"`, line: 8, column: 1}},
		},
		{
			name: "string in an integer-or-reference field",
			doc:  header + "[[spec.services]]\nname = \"web\"\nreplicas = \"three\"\n",
			want: []wantError{{path: "spec.services[0].replicas", code: "type_mismatch", message: `got string "three"`, line: 7, column: 1}},
		},
		{
			name: "float in an integer field",
			doc:  header + "[[spec.services]]\nname = \"web\"\n[spec.services.healthcheck]\ntype = \"http\"\nport = 80\nretries = 1.5\n",
			want: []wantError{{path: "spec.services[0].healthcheck.retries", code: "type_mismatch", message: `"1.5"`, line: 10, column: 1}},
		},
		{
			name: "array variable",
			doc:  header + "[spec.variables]\nok = 1\nlist = [1, 2]\n",
			want: []wantError{{path: "spec.variables.list", code: "type_mismatch", message: "got an array", line: 7, column: 1}},
		},
		{
			name: "repository string other than self",
			doc:  header + "[[spec.services]]\nname = \"web\"\n[spec.services.source]\ntype = \"git\"\nrepository = \"mine\"\n",
			want: []wantError{{path: "spec.services[0].source.repository", code: "type_mismatch", message: `got "mine"`, line: 9, column: 1}},
		},
		{
			name: "unknown field in a repository table",
			doc:  header + "[[spec.services]]\nname = \"web\"\n[spec.services.source]\ntype = \"git\"\n[spec.services.source.repository]\nurl = \"https://example.com/r.git\"\nbranche = \"main\"\n",
			want: []wantError{{path: "spec.services[0].source.repository.branche", code: "unknown_field", message: "expected one of url, branch, commit", line: 11, column: 1}},
		},
		{
			name: "unknown field in an inline repository",
			doc:  header + "[spec.manifest]\npath = \"a.toml\"\nrepository = { url = \"https://example.com/r.git\", tag = \"v1\" }\n",
			want: []wantError{{path: "spec.manifest.repository.tag", code: "unknown_field", line: 7}},
		},
		{
			name: "syntax error",
			doc:  header + "[[spec.services]]\nname = \"web\n",
			want: []wantError{{code: "toml_syntax", message: "invalid TOML", line: 6}},
		},
		{
			name: "duplicate key",
			doc:  header + "name = \"again\"\n",
			want: []wantError{{path: "metadata.name", code: "duplicate_key", message: "already defined", line: 5, column: 1}},
		},
		{
			name: "too large",
			doc:  header + "# " + strings.Repeat("x", manifest.MaxTOMLBytes) + "\n",
			want: []wantError{{code: "manifest_too_large", message: "262144"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			matchErrors(t, decodeErrors(t, tt.doc, "toml"), tt.want)
		})
	}
}

func TestDecode_JSONErrors(t *testing.T) {
	t.Parallel()
	const head = `{"api_version": "slipway.dev/v1alpha1", "kind": "Application", "metadata": {"name": "notes"},` + "\n"
	tests := []struct {
		name string
		doc  string
		want []wantError
	}{
		{
			name: "every unknown field with its position",
			doc:  head + `"spec": {"services": [{"name": "a", "port": 1},` + "\n" + `{"name": "b", "hostname": "x"}]}, "extra": true}`,
			want: []wantError{
				{path: "spec.services[0].port", code: "unknown_field", message: "unknown field `port`", line: 2, column: 37},
				{path: "spec.services[1].hostname", code: "unknown_field", line: 3, column: 15},
				{path: "extra", code: "unknown_field", line: 3, column: 35},
			},
		},
		{
			name: "duplicate key",
			doc:  head + `"kind": "Application"}`,
			want: []wantError{{path: "kind", code: "duplicate_key", line: 2, column: 1}},
		},
		{
			name: "wrong type",
			doc:  head + `"spec": {"routes": [{"hostname": "a.example.com", "port": "80"}]}}`,
			want: []wantError{{path: "spec.routes[0].port", code: "type_mismatch", message: `got string "80"`, line: 2, column: 51}},
		},
		{
			name: "wrong type in an integer-or-reference field",
			doc:  head + `"spec": {"services": [{"name": "web", "replicas": true}]}}`,
			want: []wantError{{path: "spec.services[0].replicas", code: "type_mismatch", message: "boolean true", line: 2}},
		},
		{
			name: "repository object",
			doc:  head + `"spec": {"services": [{"name": "a", "source": {"type": "git", "repository": {"url": "x", "tag": "v1"}}}, {"name": "b", "source": {"repository": "other"}}]}}`,
			want: []wantError{{path: "spec.services[0].source.repository.tag", code: "unknown_field", message: "expected one of url, branch, commit", line: 2, column: 90}},
		},
		{
			name: "repository string",
			doc:  head + `"spec": {"services": [{"name": "b", "source": {"repository": "other"}}]}}`,
			want: []wantError{{path: "spec.services[0].source.repository", code: "type_mismatch", message: `got "other"`, line: 2, column: 48}},
		},
		{
			name: "malformed",
			doc:  head + `"spec": {`,
			want: []wantError{{code: "json_malformed", line: 2}},
		},
		{
			name: "trailing data",
			doc:  head + `"spec": {}} {}`,
			want: []wantError{{code: "json_malformed", message: "after the top-level object", line: 2, column: 13}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			matchErrors(t, decodeErrors(t, tt.doc, "json"), tt.want)
		})
	}
}

func TestDecode_RepositoryForms(t *testing.T) {
	t.Parallel()
	doc := header + `[[spec.services]]
name = "a"
[spec.services.source]
type = "git"
repository = "self"
[[spec.services]]
name = "b"
[spec.services.source]
type = "git"
repository = { url = "https://example.com/b.git", branch = "main" }
[[spec.services]]
name = "c"
[spec.services.source]
type = "git"
[spec.services.source.repository]
url = "https://example.com/c.git"
commit = "0123456789012345678901234567890123456789"
`
	m, err := manifest.Decode([]byte(doc), "toml")
	if err != nil {
		t.Fatal(err)
	}
	got := []manifest.Repository{*m.Spec.Services[0].Source.Repository, *m.Spec.Services[1].Source.Repository, *m.Spec.Services[2].Source.Repository}
	want := []manifest.Repository{
		{Self: true},
		{URL: "https://example.com/b.git", Branch: "main"},
		{URL: "https://example.com/c.git", Commit: "0123456789012345678901234567890123456789"},
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("repository %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// JSON and TOML encodings decode back to the same manifest.
	js, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"repository":"self"`) {
		t.Errorf("JSON %s lacks the self repository", js)
	}
	fromJSON, err := manifest.Decode(js, "json")
	if err != nil {
		t.Fatalf("decode JSON %s: %v", js, err)
	}
	var tb strings.Builder
	if err := toml.NewEncoder(&tb).EnableMarshalerInterface().Encode(m); err != nil {
		t.Fatal(err)
	}
	fromTOML, err := manifest.Decode([]byte(tb.String()), "toml")
	if err != nil {
		t.Fatalf("decode TOML:\n%s\n%v", tb.String(), err)
	}
	for _, back := range []*manifest.Manifest{fromJSON, fromTOML} {
		for i := range want {
			if r := *back.Spec.Services[i].Source.Repository; r != want[i] {
				t.Errorf("round trip repository %d = %+v, want %+v", i, r, want[i])
			}
		}
	}
}

func TestDecode_IntAndValueForms(t *testing.T) {
	t.Parallel()
	doc := header + `[spec.variables]
n = 3
b = true
s = 'single'
d = "double \"quoted\""
[[spec.services]]
name = "web"
replicas = "${{ vars.n }}"
[spec.services.source]
type = "image"
image = "web:1"
[spec.services.healthcheck]
type = "http"
port = 0x1F90
retries = 1_0
`
	m, err := manifest.Decode([]byte(doc), "toml")
	if err != nil {
		t.Fatal(err)
	}
	vars := m.Spec.Variables
	if vars["n"].Interface() != int64(3) || vars["b"].Interface() != true || vars["s"].Interface() != "single" || vars["d"].Interface() != `double "quoted"` {
		t.Errorf("variables = %v %v %v %v", vars["n"], vars["b"], vars["s"], vars["d"])
	}
	svc := m.Spec.Services[0]
	if svc.Replicas.Ref != "${{ vars.n }}" {
		t.Errorf("replicas = %+v, want the reference", svc.Replicas)
	}
	if svc.Healthcheck.Port.N != 8080 || svc.Healthcheck.Retries.N != 10 {
		t.Errorf("port %d retries %d, want 8080 and 10", svc.Healthcheck.Port.N, svc.Healthcheck.Retries.N)
	}
}

func TestDecode_FormatUnknown(t *testing.T) {
	t.Parallel()
	errs := decodeErrors(t, header, "yaml")
	matchErrors(t, errs, []wantError{{code: "format_invalid"}})
}

// TestDecode_RepositoryTablesInArrays guards against the TOML decoder handing
// a table inside an array of tables every element's keys at once.
func TestDecode_RepositoryTablesInArrays(t *testing.T) {
	t.Parallel()
	doc := header + `[[spec.services]]
name = "a"
[spec.services.source]
type = "git"
[spec.services.source.repository]
url = "https://example.com/a.git"
[[spec.services]]
name = "b"
[spec.services.source]
type = "git"
repository = "self"
[[spec.services]]
name = "c"
[spec.services.source]
type = "git"
[spec.services.source.repository]
branch = "dev"
[[spec.services]]
name = "d"
[spec.services.source]
type = "git"
[spec.services.source.repository]
url = "https://example.com/d.git"
commit = "0123456789abcdef0123456789abcdef01234567"
`
	m, err := manifest.Decode([]byte(doc), "toml")
	if err != nil {
		t.Fatal(err)
	}
	want := []manifest.Repository{
		{URL: "https://example.com/a.git"},
		{Self: true},
		{Branch: "dev"},
		{URL: "https://example.com/d.git", Commit: "0123456789abcdef0123456789abcdef01234567"},
	}
	for i, w := range want {
		if r := m.Spec.Services[i].Source.Repository; r == nil || *r != w {
			t.Errorf("service %d repository = %+v, want %+v", i, r, w)
		}
	}
	bad := header + `[[spec.services]]
name = "a"
[spec.services.source.repository]
url = "https://example.com/a.git"
[[spec.services]]
name = "b"
[spec.services.source.repository]
url = 42
tag = "v1"
`
	matchErrors(t, decodeErrors(t, bad, "toml"), []wantError{
		{path: "spec.services[1].source.repository.url", code: "type_mismatch", message: `expected a string, got "42"`, line: 12, column: 1},
		{path: "spec.services[1].source.repository.tag", code: "unknown_field", line: 13, column: 1},
	})
}

func TestDecode_RepositoryDottedKeys(t *testing.T) {
	t.Parallel()
	doc := header + "[spec.manifest]\npath = \"app.toml\"\nrepository.url = \"https://example.com/a.git\"\nrepository.branch = \"main\"\n"
	m, err := manifest.Decode([]byte(doc), "toml")
	if err != nil {
		t.Fatal(err)
	}
	if r := m.Spec.Manifest.Repository; r == nil || *r != (manifest.Repository{URL: "https://example.com/a.git", Branch: "main"}) {
		t.Errorf("repository = %+v", r)
	}
}
