package skali_test

import (
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/manifest/importer"
	"github.com/slipwayhq/slipway/manifest/importer/internal/importtest"
)

func TestImport_Golden(t *testing.T) {
	importtest.Golden(t, importer.Skali, "testdata", map[string]bool{
		"minimal.yaml":  true,
		"orders.yaml":   true,
		"values.yaml":   true,
		"upgraded.yaml": true,
		// team-wiki and photo-share declare buckets: errors.
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
	const head = "name: app\napplications:\n  web:\n    image: nginx:1.27\n    ports:\n      http:\n        port: 80\n"
	tests := []struct {
		name  string
		src   string
		diags []string
		check func(t *testing.T, m *manifest.Manifest)
	}{
		{name: "build becomes git self", src: "name: app\napplications:\n  web:\n    build:\n      context: ./web\n      dockerfile: deploy/Dockerfile\n      target: runtime\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				s := m.Spec.Services[0].Source
				if s.Type != manifest.SourceGit || !s.Repository.Self || s.Build.Context != "web" || s.Build.Dockerfile != "web/deploy/Dockerfile" || s.Build.Target != "runtime" {
					t.Errorf("source = %+v build = %+v", s, s.Build)
				}
			}},
		{name: "value with default", src: head + "    environment:\n      A: \"${X:-1}\"\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				if m.Spec.Services[0].Environment["A"] != "${{ vars.X }}" || m.Spec.Variables["X"].String() != "1" {
					t.Errorf("env = %v vars = %v", m.Spec.Services[0].Environment, m.Spec.Variables)
				}
			}},
		{name: "required value", src: head + "    environment:\n      A: \"${X}\"\n", diags: []string{"warning: applications.web.environment.A: project value X has no default"}},
		{name: "conflicting defaults", src: head + "    environment:\n      A: \"${X:-1}\"\n      B: \"${X:-2}\"\n", diags: []string{"error: applications.web.environment.B: project value X has two different inline defaults"}},
		{name: "malformed value", src: head + "    environment:\n      A: \"${X\"\n", diags: []string{"error: applications.web.environment.A: malformed"}},
		{name: "named route port", src: head + "    routes:\n      public:\n        domain: a.example.com\n        port: http\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				if r := m.Spec.Routes; len(r) != 1 || r[0].Port != 80 || r[0].Visibility != manifest.VisibilityPublic {
					t.Errorf("routes = %+v", r)
				}
			}},
		{name: "unknown route port", src: head + "    routes:\n      public:\n        domain: a.example.com\n        port: grpc\n", diags: []string{"error: applications.web.routes.public.port:"}},
		{name: "route path", src: head + "    routes:\n      public:\n        domain: a.example.com\n        port: http\n        path: /api\n", diags: []string{"error: applications.web.routes.public.path:"}},
		{name: "tls disabled", src: head + "    routes:\n      public:\n        domain: a.example.com\n        port: http\n        tls: disabled\n", diags: []string{"warning: applications.web.routes.public.tls:"}},
		{name: "aliases redirect", src: head + "    routes:\n      public:\n        domain: a.example.com\n        port: http\n        aliases: [www.a.example.com]\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				if r := m.Spec.Routes; len(r) != 2 || r[1].Redirect == nil || r[1].Redirect.To != "https://a.example.com" || r[1].Hostname != "www.a.example.com" {
					t.Errorf("routes = %+v", r)
				}
			}},
		{name: "startup probe start period", src: head + "    health:\n      startup:\n        http: { port: http, path: /s }\n        interval: 2s\n        failureThreshold: 30\n      readiness:\n        http: { port: 80, path: /r }\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				h := m.Spec.Services[0].Healthcheck
				if h.Path != "/r" || h.StartPeriodSeconds.N != 60 || h.IntervalSeconds.N != 10 || h.Retries.N != 3 {
					t.Errorf("healthcheck = %+v", h)
				}
			}},
		{name: "liveness warns", src: head + "    health:\n      readiness:\n        http: { port: http, path: /r }\n      liveness:\n        http: { port: http, path: /l }\n", diags: []string{"warning: applications.web.health.liveness:"}},
		{name: "resources units", src: head + "    resources:\n      limits:\n        cpu: 1.25\n        memory: 1GB\n      requests:\n        cpu: 0.1\n",
			diags: []string{"warning: applications.web.resources.requests:"},
			check: func(t *testing.T, m *manifest.Manifest) {
				r := m.Spec.Services[0].Resources
				if r.CPUMillis.N != 1250 || r.MemoryBytes.N != 1e9 {
					t.Errorf("resources = %d %d", r.CPUMillis.N, r.MemoryBytes.N)
				}
			}},
		{name: "bare unit rejected", src: head + "    resources:\n      limits:\n        memory: 1G\n", diags: []string{"error: applications.web.resources.limits.memory:"}},
		{name: "rollout recreate", src: head + "    deployment:\n      rollout:\n        strategy: recreate\n", check: func(t *testing.T, m *manifest.Manifest) {
			if r := m.Spec.Services[0].Rollout; r == nil || r.Order != manifest.RolloutStopFirst {
				t.Errorf("rollout = %+v", r)
			}
		}},
		{name: "rollout rolling", src: head + "    deployment:\n      rollout:\n        strategy: rolling\n", check: func(t *testing.T, m *manifest.Manifest) {
			if r := m.Spec.Services[0].Rollout; r == nil || r.Order != manifest.RolloutStartFirst {
				t.Errorf("rollout = %+v", r)
			}
		}},
		{name: "rollout blue-green", src: head + "    deployment:\n      rollout:\n        strategy: blue-green\n", diags: []string{"warning: applications.web.deployment.rollout.strategy:"}},
		{name: "release command", src: head + "    deployment:\n      releaseCommand:\n        command: [migrate]\n", check: func(t *testing.T, m *manifest.Manifest) {
			if j := m.Spec.Jobs; len(j) != 1 || j[0].Name != "web-release" || j[0].TimeoutSeconds.N != 600 {
				t.Errorf("jobs = %+v", j)
			}
		}},
		{name: "database", src: head + "    environment:\n      URL: \"{{databases.main.url}}\"\n      PASS: \"{{databases.main.password}}\"\n      HOST: \"{{databases.main.host}}\"\n      PORT: \"{{databases.main.port}}\"\ndatabases:\n  main:\n    engine: postgres\n    version: 17\n",
			diags: []string{"warning: databases.main:", "warning: applications.web.environment.PASS:"},
			check: func(t *testing.T, m *manifest.Manifest) {
				db := svc(m, "main")
				if db == nil || db.Source.Image != "postgres:17" || db.Healthcheck.Type != manifest.HealthcheckCommand || len(m.Spec.Secrets) != 1 {
					t.Fatalf("database service = %+v", db)
				}
				web := svc(m, "web")
				env := web.Environment
				if env["URL"] != "postgres://main@main:5432/main?sslmode=disable" || env["PASS_FILE"] != "/run/secrets/main-password" || env["HOST"] != "main" || env["PORT"] != "5432" {
					t.Errorf("env = %v", env)
				}
				if len(web.DependsOn) != 1 || web.DependsOn[0] != "main" {
					t.Errorf("depends_on = %v", web.DependsOn)
				}
			}},
		{name: "database 18 data dir", src: "name: app\ndatabases:\n  main:\n    engine: postgres\n    version: 18\n", diags: []string{"warning: databases.main:"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if mt := m.Spec.Services[0].Mounts[0].Target; mt != "/var/lib/postgresql" {
					t.Errorf("mount target = %s", mt)
				}
			}},
		{name: "database version", src: "name: app\ndatabases:\n  main:\n    engine: postgres\n    version: 16\n", diags: []string{"error: databases.main.version:"}},
		{name: "bucket", src: head + "buckets:\n  files:\n    visibility: private\n", diags: []string{"error: buckets.files: bucket \"files\" has no Slipway equivalent"}},
		{name: "bucket output", src: head + "    environment:\n      S3: \"{{buckets.files.endpoint}}\"\n", diags: []string{"error: applications.web.environment.S3:"}},
		{name: "volume", src: head + "    volumes:\n      state:\n        mountPath: /var/lib/app\n        size: 5GB\n", diags: []string{"warning: applications.web.volumes.state.size:"},
			check: func(t *testing.T, m *manifest.Manifest) {
				s := m.Spec.Services[0]
				if len(s.Mounts) != 1 || s.Mounts[0].Volume != "web-state" || s.Rollout == nil || s.Rollout.Order != manifest.RolloutStopFirst {
					t.Errorf("mounts = %+v rollout = %+v", s.Mounts, s.Rollout)
				}
			}},
		{name: "unknown field has a line", src: head + "    sidecar: true\n", diags: []string{"error: applications.web.sidecar: unknown field; it has no Slipway translation and was not carried over (line 8)"}},
		{name: "not yaml", src: "name: [\n", diags: []string{"error: (file): not valid YAML"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := importer.Import(importer.Skali, []byte(tt.src), importtest.Options)
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

func TestImport_BuildNeedsRepository(t *testing.T) {
	t.Parallel()
	src := []byte("name: a\napplications:\n  web:\n    build:\n      context: .\n")
	res, err := importer.Import(importer.Skali, src, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	importtest.Expect(t, res, []string{"error: applications.web.build: this builds from the project's own repository"})
	res, err = importer.Import(importer.Skali, src, importer.Options{Repository: "https://example.com/a.git", Branch: "trunk", ManifestPath: "deploy/slipway.toml"})
	if err != nil || !res.OK() {
		t.Fatalf("%+v %v", res, err)
	}
	if mf := res.Manifest.Spec.Manifest; mf == nil || mf.Path != "deploy/slipway.toml" || mf.Repository.URL != "https://example.com/a.git" || mf.Repository.Branch != "trunk" {
		t.Errorf("spec.manifest = %+v", mf)
	}
	res, err = importer.Import(importer.Skali, src, importer.Options{Repository: "not a url"})
	if err != nil {
		t.Fatal(err)
	}
	importtest.Expect(t, res, []string{"error: --repository: "})
}

// TestImport_Messages pins the wording issue #24 asked for: each line says
// what becomes of the field, and nothing it does not apply to.
func TestImport_Messages(t *testing.T) {
	t.Parallel()
	const app = "name: app\napplications:\n  web:\n    image: nginx:1.27\n"
	tests := []struct {
		name   string
		src    string
		want   []string // prefixes of diagnostic lines
		absent []string // substrings no diagnostic may contain
	}{
		{name: "obsolete version", src: "version: \"1\"\n" + app,
			want: []string{"warning: version: obsolete key: skali removed the manifest version"}, absent: []string{"unknown field"}},
		{name: "obsolete watermark", src: "skali: v0.1.0\n" + app, want: []string{"warning: skali: obsolete key"}},
		{name: "removed backups", src: app + "backups:\n  daily:\n    schedule: \"0 3 * * *\"\n", want: []string{"warning: backups: backup policies are not carried over"}},
		{name: "contrib extensions", src: "name: app\ndatabases:\n  d:\n    engine: postgres\n    version: 17\n    extensions: [citext, pg_trgm]\n",
			want: []string{"warning: databases.d: "}, absent: []string{"pgvector"}},
		{name: "vector extension", src: "name: app\ndatabases:\n  d:\n    engine: postgres\n    version: 17\n    extensions: [vector]\n",
			want: []string{"warning: databases.d: "}},
		{name: "platforms", src: app + "    platforms: [linux/amd64]\n", want: []string{"warning: applications.web.platforms: platform restrictions are not carried over"}},
		{name: "commands", src: app + "    commands:\n      seed: [bun, run, seed]\n", want: []string{"warning: applications.web.commands: named host-side commands"}},
		{name: "dev", src: app + "    dev:\n      command: [bun, run, dev]\n", want: []string{"warning: applications.web.dev: local dev mode"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := importer.Import(importer.Skali, []byte(tt.src), importer.Options{})
			if err != nil {
				t.Fatal(err)
			}
			importtest.Expect(t, res, tt.want)
			importtest.ExpectNone(t, res, tt.absent)
		})
	}
	res, _ := importer.Import(importer.Skali, []byte("name: app\ndatabases:\n  d:\n    engine: postgres\n    version: 17\n    extensions: [citext, vector]\n"), importer.Options{})
	if msg := res.Diagnostics[0].Message; !strings.Contains(msg, "citext (the official image ships them") || !strings.Contains(msg, "vector (the official image has no pgvector") {
		t.Errorf("extension note = %s", msg)
	}
}

func TestImport_BucketNamed(t *testing.T) {
	t.Parallel()
	res, err := importer.Import(importer.Skali, []byte("name: a\nbuckets:\n  photos: {}\n"), importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diagnostics) == 0 || !strings.Contains(res.Diagnostics[0].Message, `"photos"`) || res.Diagnostics[0].Line != 3 {
		t.Errorf("diagnostics = %+v", res.Diagnostics)
	}
}

func FuzzImport(f *testing.F) {
	importtest.Seeds(f, "testdata")
	f.Fuzz(func(t *testing.T, data []byte) {
		importtest.Fuzz(t, importer.Skali, data)
	})
}
