package ply_test

import (
	"testing"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/manifest/importer"
	"github.com/slipwayhq/slipway/manifest/importer/internal/importtest"
)

func TestImport_Golden(t *testing.T) {
	importtest.Golden(t, importer.Ply, "testdata", map[string]bool{
		"flat.toml":    true,
		"stack.toml":   true,
		"members.toml": true,
		// grouped.toml builds from packages and unknown.toml names an
		// unmapped registry package: errors.
	})
}

func svc(m *manifest.Manifest, name string) *manifest.Service {
	for i := range m.Spec.Services {
		if m.Spec.Services[i].Name == name {
			return &m.Spec.Services[i]
		}
	}
	return nil
}

func TestImport_Mappings(t *testing.T) {
	t.Parallel()
	const app = "[package]\nname = \"app\"\n[run]\n"
	const stack = "[package]\nname = \"app\"\n[[service]]\nrun = \"postgres@17\"\nname = \"db\"\n"
	runMappings(t, []mapping{
		{name: "array entrypoint", src: app + "entrypoint = [\"/app\", \"serve\"]\n", check: func(t *testing.T, m *manifest.Manifest) {
			if c := m.Spec.Services[0].Command; len(c) != 2 || c[0] != "/app" {
				t.Errorf("command = %v", c)
			}
		}},
		{name: "string entrypoint", src: app + "entrypoint = \"exec app\"\n", diags: []string{"warning: run.entrypoint: a string entrypoint runs through /bin/sh -c"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if c := m.Spec.Services[0].Command; len(c) != 3 || c[0] != "/bin/sh" || c[1] != "-c" {
					t.Errorf("command = %v", c)
				}
			}},
		{name: "resources", src: app + "[run.resources]\nmem = \"512M\"\ncpu = \"0.5\"\n", check: func(t *testing.T, m *manifest.Manifest) {
			r := m.Spec.Services[0].Resources
			if r.MemoryBytes.N != 512<<20 || r.CPUMillis.N != 500 {
				t.Errorf("resources = %d %d", r.MemoryBytes.N, r.CPUMillis.N)
			}
		}},
		{name: "resource range", src: app + "[run.resources]\nmem = { min = \"256M\", max = \"1G\" }\n", diags: []string{"warning: run.resources.mem:"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if r := m.Spec.Services[0].Resources; r.MemoryBytes.N != 1<<30 {
					t.Errorf("memory = %d", r.MemoryBytes.N)
				}
			}},
		{name: "volumes", src: app + "[run.volumes]\ndata = \"/data\"\n", check: func(t *testing.T, m *manifest.Manifest) {
			if mt := m.Spec.Services[0].Mounts; len(mt) != 1 || mt[0].Volume != "app-data" || mt[0].Target != "/data" {
				t.Errorf("mounts = %+v", mt)
			}
		}},
		{name: "health", src: app + "[run.health]\nport = 80\n", diags: []string{"warning: run.health:"}},
		{name: "restart never", src: app + "[run.restart]\npolicy = \"never\"\n", diags: []string{"warning: run.restart.policy:"}},
		{name: "secret param", src: app + "[run.params]\nkey = { secret = true }\n[run.env]\nKEY = \"{key}\"\n",
			diags: []string{"warning: run.env.KEY:"},
			check: func(t *testing.T, m *manifest.Manifest) {
				s := m.Spec.Services[0]
				if len(m.Spec.Secrets) != 1 || m.Spec.Secrets[0].Name != "key" || s.Environment["KEY_FILE"] != "/run/secrets/key" {
					t.Errorf("secrets = %+v env = %v", m.Spec.Secrets, s.Environment)
				}
			}},
		{name: "secret inside value", src: app + "[run.params]\nkey = { secret = true }\n[run.env]\nURL = \"x://{key}@h\"\n", diags: []string{"error: run.env.URL:"}},
		{name: "no params table keeps braces", src: app + "[run.env]\nX = \"{literal}\"\n", check: func(t *testing.T, m *manifest.Manifest) {
			if v := m.Spec.Services[0].Environment["X"]; v != "{literal}" {
				t.Errorf("X = %q", v)
			}
		}},
		{name: "build dependencies", src: "[package]\nname = \"app\"\n[build.dependencies]\nnode = \"22\"\n", diags: []string{"error: build.dependencies:"}},
		{name: "registry postgres", src: stack, diags: []string{"warning: service[0].run: ply's postgres package becomes the official image postgres:17"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if s := svc(m, "db"); s == nil || s.Environment["POSTGRES_USER"] != "postgres" || len(m.Spec.Secrets) != 1 {
					t.Errorf("db = %+v", s)
				}
			}},
		{name: "registry redis", src: "[package]\nname = \"app\"\n[[service]]\nrun = \"redis@7\"\n", diags: []string{"warning: service[0].run:"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if s := svc(m, "redis"); s == nil || s.Source.Image != "redis:7" {
					t.Errorf("services = %+v", m.Spec.Services)
				}
			}},
		{name: "unknown registry package", src: "[package]\nname = \"app\"\n[[service]]\nrun = \"mongodb@7\"\n", diags: []string{"error: service[0].run: registry package \"mongodb\""}},
		{name: "version range", src: "[package]\nname = \"app\"\n[[service]]\nrun = \"postgres@>=17\"\n", diags: []string{"error: service[0].run:"}},
		{name: "param reference", src: stack + "[[service]]\nrun = \"./web\"\nafter = [\"db\"]\n[service.env]\nU = \"{db.user}\"\nH = \"{db.addr}\"\n", diags: []string{"warning: service[1].run:"},
			check: func(t *testing.T, m *manifest.Manifest) {
				s := svc(m, "web")
				if s.Environment["U"] != "postgres" || s.Environment["H"] != "db:5432" || len(s.DependsOn) != 1 {
					t.Errorf("web = %+v", s)
				}
				if b := s.Source.Build; b.Context != "web" || b.Dockerfile != "web/Dockerfile" {
					t.Errorf("build = %+v", b)
				}
			}},
		{name: "unknown param reference", src: stack + "[[service]]\nrun = \"./web\"\n[service.env]\nU = \"{db.nope}\"\n", diags: []string{"error: service[1].env.U:"}},
		{name: "git member", src: "[package]\nname = \"app\"\n[[service]]\nrun = \"git+https://example.com/a/b.git#dev\"\n", diags: []string{"warning: service[0].run: the repository is built with Docker"},
			check: func(t *testing.T, m *manifest.Manifest) {
				s := m.Spec.Services[0]
				if s.Name != "b" || s.Source.Repository.URL != "https://example.com/a/b.git" || s.Source.Repository.Branch != "dev" {
					t.Errorf("service = %+v", s)
				}
			}},
		{name: "domain needs port", src: "[package]\nname = \"app\"\n[[service]]\nrun = \"./web\"\ndomain = \"a.example.com\"\n", diags: []string{"error: service[0].domain:"}},
		{name: "after unknown", src: stack + "[[service]]\nrun = \"./web\"\nafter = [\"nope\"]\n", diags: []string{"error: service[1].after[0]:"}},
	})
}

// mapping is one import case: the diagnostics whose starts must appear and
// what the manifest must hold.
type mapping struct {
	name  string
	src   string
	diags []string
	check func(t *testing.T, m *manifest.Manifest)
}

func runMappings(t *testing.T, tests []mapping) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := importer.Import(importer.Ply, []byte(tt.src), importtest.Options)
			if err != nil {
				t.Fatal(err)
			}
			importtest.Expect(t, res, tt.diags)
			if tt.check != nil {
				if res.Manifest == nil {
					t.Fatalf("no manifest: %v", res.Diagnostics)
				}
				tt.check(t, res.Manifest)
			}
		})
	}
}

func FuzzImport(f *testing.F) {
	importtest.Seeds(f, "testdata")
	f.Fuzz(func(t *testing.T, data []byte) {
		importtest.Fuzz(t, importer.Ply, data)
	})
}
