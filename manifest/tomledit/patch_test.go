package tomledit_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/manifest/tomledit"
)

// commented is a manifest whose author wrote comments everywhere a person
// would, with dotted keys, inline tables and an array split over lines.
const commented = `# Shop: the storefront and its worker.
# Owned by the web team.
api_version = "slipway.dev/v1alpha1"
kind = "Application" # always Application

[metadata]
name = "shop"

# Defaults every environment starts from.
[spec.variables]
web_replicas = 2 # two is enough off-season
domain = "shop.example.com"

# The storefront.
[[spec.services]]
name = "web"
replicas = "${{ vars.web_replicas }}"
command = [
  "shop",   # the binary
  "serve",
]

[spec.services.source]
type = "image"
image = "ghcr.io/example/shop:1.0.0" # pinned by CI

[spec.services.environment]
# Logging
LOG_LEVEL = "info"
PORT = "8080"

# The queue worker.
[[spec.services]]
name = "worker"
source = { type = "image", image = "ghcr.io/example/shop:1.0.0" }
environment.QUEUE = "orders"

[[spec.routes]]
hostname = "${{ vars.domain }}"
service = "web"
port = 8080 # the web port
`

// edit decodes src, changes it with change and patches src to match,
// checking the result decodes to exactly the changed manifest.
func edit(t *testing.T, src string, change func(m *manifest.Manifest)) string {
	t.Helper()
	m, err := manifest.Decode([]byte(src), "toml")
	if err != nil {
		t.Fatal(err)
	}
	have, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	change(m)
	want, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out, err := tomledit.Patch([]byte(src), have, want)
	if err != nil {
		t.Fatalf("patch: %v", err)
	}
	got, err := manifest.Decode(out, "toml")
	if err != nil {
		t.Fatalf("the patched document does not decode: %v\n%s", err, out)
	}
	gotJSON, _ := json.Marshal(got)
	if string(gotJSON) != string(want) {
		t.Fatalf("the patched document decodes to\n%s\nwant\n%s\ndocument:\n%s", gotJSON, want, out)
	}
	return string(out)
}

// TestPatch_KeepsEverythingElse: each edit changes only its own lines, so
// the document is the original with a small, exact difference.
func TestPatch_KeepsEverythingElse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(m *manifest.Manifest)
		// old and new: the original with old replaced by new is the result.
		old, new string
	}{
		{
			name:   "change a default variable",
			change: func(m *manifest.Manifest) { m.Spec.Variables["web_replicas"] = manifest.IntValue(3) },
			old:    "web_replicas = 2 # two", new: "web_replicas = 3 # two",
		},
		{
			name:   "add a default variable",
			change: func(m *manifest.Manifest) { m.Spec.Variables["region"] = manifest.StringValue("eu") },
			old:    "domain = \"shop.example.com\"\n", new: "domain = \"shop.example.com\"\nregion = \"eu\"\n",
		},
		{
			name:   "remove a default variable",
			change: func(m *manifest.Manifest) { delete(m.Spec.Variables, "domain") },
			old:    "domain = \"shop.example.com\"\n", new: "",
		},
		{
			name: "set a service's environment value",
			change: func(m *manifest.Manifest) {
				m.Spec.Services[0].Environment["LOG_LEVEL"] = "debug"
			},
			old: `LOG_LEVEL = "info"`, new: `LOG_LEVEL = "debug"`,
		},
		{
			name: "add to a service's environment table",
			change: func(m *manifest.Manifest) {
				m.Spec.Services[0].Environment["TZ"] = "UTC"
			},
			old: "PORT = \"8080\"\n", new: "PORT = \"8080\"\nTZ = \"UTC\"\n",
		},
		{
			name: "add to a dotted-key environment",
			change: func(m *manifest.Manifest) {
				m.Spec.Services[1].Environment["WORKERS"] = "4"
			},
			old: "environment.QUEUE = \"orders\"\n", new: "environment.QUEUE = \"orders\"\nenvironment.WORKERS = \"4\"\n",
		},
		{
			name:   "change an inline table",
			change: func(m *manifest.Manifest) { m.Spec.Services[1].Source.Image = "ghcr.io/example/shop:1.1.0" },
			old:    `source = { type = "image", image = "ghcr.io/example/shop:1.0.0" }`,
			new:    `source = { type = "image", image = "ghcr.io/example/shop:1.1.0" }`,
		},
		{
			name:   "change an image in a sub-table of the first element",
			change: func(m *manifest.Manifest) { m.Spec.Services[0].Source.Image = "ghcr.io/example/shop:2.0.0" },
			old:    `image = "ghcr.io/example/shop:1.0.0" # pinned by CI`,
			new:    `image = "ghcr.io/example/shop:2.0.0" # pinned by CI`,
		},
		{
			name: "declare an environment's variable",
			change: func(m *manifest.Manifest) {
				m.Spec.Environments = map[string]manifest.EnvironmentBlock{"production": {Variables: map[string]manifest.Value{"web_replicas": manifest.IntValue(4)}}}
			},
			old: "port = 8080 # the web port\n",
			new: "port = 8080 # the web port\n\n[spec.environments.production.variables]\nweb_replicas = 4\n",
		},
		{
			name: "add a key to the worker",
			change: func(m *manifest.Manifest) {
				m.Spec.Services[1].Replicas = manifest.NewInt(2)
			},
			old: "environment.QUEUE = \"orders\"\n", new: "environment.QUEUE = \"orders\"\nreplicas = 2\n",
		},
		{
			name: "remove the worker",
			change: func(m *manifest.Manifest) {
				m.Spec.Services = m.Spec.Services[:1]
			},
			old: "# The queue worker.\n[[spec.services]]\nname = \"worker\"\nsource = { type = \"image\", image = \"ghcr.io/example/shop:1.0.0\" }\nenvironment.QUEUE = \"orders\"\n\n",
			new: "",
		},
		{
			name: "change the command array",
			change: func(m *manifest.Manifest) {
				m.Spec.Services[0].Command = []string{"shop", "serve", "--verbose"}
			},
			old: "[\n  \"shop\",   # the binary\n  \"serve\",\n]", new: `["shop", "serve", "--verbose"]`,
		},
		{
			name: "rename the first service",
			change: func(m *manifest.Manifest) {
				m.Spec.Services[0].Name = "storefront"
				m.Spec.Routes[0].Service = "storefront"
			},
			old: "name = \"web\"\nreplicas", new: "name = \"storefront\"\nreplicas",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := edit(t, commented, tt.change)
			if !strings.Contains(commented, tt.old) {
				t.Fatalf("test bug: %q is not in the document", tt.old)
			}
			want := strings.Replace(commented, tt.old, tt.new, 1)
			if tt.name == "rename the first service" {
				want = strings.Replace(want, `service = "web"`, `service = "storefront"`, 1)
			}
			if got != want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestPatch_NewServiceAndEnvironmentTable: a service added by a field
// edit comes out as [[spec.services]] with its own tables, after the last
// service and before the routes; every comment of the original stays.
func TestPatch_NewServiceAndEnvironmentTable(t *testing.T) {
	t.Parallel()
	got := edit(t, commented, func(m *manifest.Manifest) {
		m.Spec.Services = append(m.Spec.Services, manifest.Service{
			Name:        "cron",
			Source:      manifest.Source{Type: "image", Image: "ghcr.io/example/cron:1"},
			Environment: map[string]string{"SCHEDULE": "@hourly"},
		})
	})
	for _, line := range strings.Split(commented, "\n") {
		if strings.Contains(line, "#") && !strings.Contains(got, line) {
			t.Errorf("lost the commented line %q", line)
		}
	}
	want := "environment.QUEUE = \"orders\"\n\n[[spec.services]]\nname = \"cron\"\n\n[spec.services.source]\ntype = \"image\"\nimage = \"ghcr.io/example/cron:1\"\n\n[spec.services.environment]\nSCHEDULE = \"@hourly\"\n\n[[spec.routes]]"
	if !strings.Contains(got, want) {
		t.Fatalf("the new service is not written after the worker:\n%s", got)
	}
}

// TestPatch_Examples patches every example manifest with a variable of a
// new environment and a changed replica count, and checks the result
// still holds every comment line.
func TestPatch_Examples(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"minimal", "staging-production", "postgres-migrations", "links-notes", "repository-previews", "redirects-wildcards"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src := readExample(t, name)
			got := edit(t, src, func(m *manifest.Manifest) {
				if m.Spec.Environments == nil {
					m.Spec.Environments = map[string]manifest.EnvironmentBlock{}
				}
				b := m.Spec.Environments["qa"]
				if b.Variables == nil {
					b.Variables = map[string]manifest.Value{}
				}
				b.Variables["tier"] = manifest.StringValue("qa")
				m.Spec.Environments["qa"] = b
				if len(m.Spec.Services) > 0 {
					m.Spec.Services[0].Replicas = manifest.NewInt(5)
				}
			})
			for _, line := range strings.Split(src, "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), "#") && !strings.Contains(got, line) {
					t.Errorf("lost the comment %q", line)
				}
			}
		})
	}
}

func readExample(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", name+".toml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
