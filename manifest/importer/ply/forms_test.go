package ply_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/manifest/importer"
	"github.com/slipwayhq/slipway/manifest/importer/internal/importtest"
)

func deps(m *manifest.Manifest, name string) []string { return svc(m, name).DependsOn }

// TestImport_Forms covers the forms ply's own parser accepts that issue #24
// found misread, and the other member and app forms of its source.
func TestImport_Forms(t *testing.T) {
	t.Parallel()
	const db = "[package]\nname = \"app\"\n[[service]]\nrun = \"postgres@17\"\nname = \"db\"\n"
	runMappings(t, []mapping{
		// Misreading 4: the flat form's [package] include is a build input.
		{name: "flat include", src: "[package]\nname = \"app\"\nversion = \"0.1.0\"\nentrypoint = [\"./server\"]\ninclude = [\"server\"]\n[ports]\nweb = 8080\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				if c := m.Spec.Services[0].Command; len(c) != 1 || c[0] != "./server" {
					t.Errorf("command = %v", c)
				}
			}},
		// Misreading 5: a member's env is an array of KEY=VALUE strings.
		{name: "env array", src: db + "[[service]]\nrun = \"./server\"\nname = \"server\"\nenv = [\"DATABASE_URL={db.url}\", \"MODE=prod\", \"EMPTY=\", \"EQ=a=b\"]\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				env := svc(m, "server").Environment
				if env["DATABASE_URL"] != "postgres://postgres@db:5432/postgres?sslmode=disable" || env["MODE"] != "prod" || env["EMPTY"] != "" || env["EQ"] != "a=b" {
					t.Errorf("env = %v", env)
				}
				// {db.url} is also the order: server waits for db.
				if d := deps(m, "server"); !slices.Equal(d, []string{"db"}) {
					t.Errorf("depends_on = %v", d)
				}
			}},
		{name: "env entry without =", src: db + "[[service]]\nrun = \"./server\"\nenv = [\"NOEQ\"]\n", diags: []string{"error: service[1].env[0]: expected a \"KEY=VALUE\" string"}},
		// Misreading 6: e is the original alias of env.
		{name: "e alias", src: db + "[[service]]\nrun = \"./server\"\ne = [\"PGHOST={db.host}\"]\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				if v := svc(m, "server").Environment["PGHOST"]; v != "db" {
					t.Errorf("PGHOST = %q", v)
				}
			}},
		{name: "env and e", src: db + "[[service]]\nrun = \"./server\"\ne = [\"A=1\"]\nenv = [\"B=2\"]\n", diags: []string{"error: service[1].e: a member sets both env and e"}},
		// Misreading 7: domain, volume, after and publish take a string or
		// an array.
		{name: "lists", src: db + "[[service]]\nrun = \"./web\"\nname = \"web\"\ndomain = [\"a.example.com\", \"b.example.com\"]\nvolume = [\"/cache\", \"uploads:/srv/uploads\"]\nafter = \"db\"\npublish = [\"8080:3000\"]\n",
			diags: []string{"warning: service[1].publish: Slipway does not publish host ports"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if r := m.Spec.Routes; len(r) != 2 || r[0].Port != 3000 || r[1].Hostname != "b.example.com" {
					t.Errorf("routes = %+v", r)
				}
				if mt := svc(m, "web").Mounts; len(mt) != 2 || mt[0].Target != "/cache" || mt[1].Volume != "uploads" {
					t.Errorf("mounts = %+v", mt)
				}
				if d := deps(m, "web"); !slices.Equal(d, []string{"db"}) {
					t.Errorf("depends_on = %v", d)
				}
			}},
		{name: "single strings", src: db + "[[service]]\nrun = \"./web\"\ndomain = \"a.example.com\"\nvolume = \"/data\"\npublish = \"internal:3000\"\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				if r := m.Spec.Routes; len(r) != 1 || r[0].Port != 3000 {
					t.Errorf("routes = %+v", r)
				}
			}},
		// Misreading 8: wait conditions are member, member.param and
		// member.param == 'value', never split on ':'.
		{name: "wait conditions", src: db + "[[service]]\nrun = \"./a\"\nafter = [\"db\"]\n[[service]]\nrun = \"./b\"\nafter = [\"db.port\"]\n[[service]]\nrun = \"./c\"\nafter = [\"db.state == 'healthy'\"]\n[[service]]\nrun = \"./d\"\nafter = [\"c.finish_boot == \\\"ok\\\"\"]\n",
			diags: []string{"warning: service[2].after[0]: Slipway starts this service once db runs and passes its health check; it does not wait for db to publish port",
				"warning: service[4].after[0]: Slipway starts this service once c runs"},
			check: func(t *testing.T, m *manifest.Manifest) {
				for name, want := range map[string]string{"a": "db", "b": "db", "c": "db", "d": "c"} {
					if d := deps(m, name); !slices.Equal(d, []string{want}) {
						t.Errorf("%s depends_on = %v, want %s", name, d, want)
					}
				}
			}},
		{name: "bad wait condition", src: db + "[[service]]\nrun = \"./a\"\nafter = [\"db.state != 'x'\"]\n", diags: []string{"error: service[1].after[0]:"}},
		// The message fix: a member's build command has no equivalent.
		{name: "member build", src: "[package]\nname = \"app\"\n[[service]]\nrun = \"git+https://example.com/a/web#main\"\nbuild = \"npm install\"\n",
			diags: []string{"error: service[0].build: ply runs this build command"}},
		{name: "deploy-time variables", src: db + "[[service]]\nrun = \"./a\"\nenv = [\"PW=$PW\", \"URL=postgres://u:${PW}@db/x\", \"COST=$$5\", \"TAIL=a$\"]\n",
			diags: []string{"warning: service[1].env[0]: the deploy-time value $PW has no default"},
			check: func(t *testing.T, m *manifest.Manifest) {
				env := svc(m, "a").Environment
				if env["PW"] != "${{ vars.PW }}" || env["URL"] != "postgres://u:${{ vars.PW }}@db/x" || env["COST"] != "$5" || env["TAIL"] != "a$" {
					t.Errorf("env = %v", env)
				}
				if _, ok := m.Spec.Variables["PW"]; !ok {
					t.Errorf("variables = %v", m.Spec.Variables)
				}
			}},
		{name: "password set by the member", src: "[stack]\nname = \"app\"\n[[app]]\nrun = \"postgres@17\"\nname = \"db\"\ne = [\"POSTGRES_PASSWORD=$PW\"]\n",
			diags: []string{"warning: app[0].e[0]: POSTGRES_PASSWORD set here replaces the generated secret file", "warning: app[0].e[0]: Slipway variables are plain configuration"},
			check: func(t *testing.T, m *manifest.Manifest) {
				s := svc(m, "db")
				if _, both := s.Environment["POSTGRES_PASSWORD_FILE"]; both || s.Environment["POSTGRES_PASSWORD"] != "${{ vars.PW }}" || len(s.Secrets) != 0 {
					t.Errorf("db = %+v", s)
				}
			}},
		{name: "query joins", src: db + "[[service]]\nrun = \"./a\"\nenv = [\"URL={db.url}?application_name=a\"]\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				if v := svc(m, "a").Environment["URL"]; v != "postgres://postgres@db:5432/postgres?sslmode=disable&application_name=a" {
					t.Errorf("URL = %q", v)
				}
			}},
		{name: "query parameter replaces the url's own", src: db + "[[service]]\nrun = \"./a\"\nenv = [\"URL={db.url}?sslmode=require&application_name=a\"]\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				if v := svc(m, "a").Environment["URL"]; v != "postgres://postgres@db:5432/postgres?sslmode=require&application_name=a" {
					t.Errorf("URL = %q", v)
				}
			}},
		{name: "secret param reference", src: db + "[[service]]\nrun = \"./a\"\nenv = [\"PGPASSWORD={db.password}\"]\n",
			diags: []string{"warning: service[1].env[0]: Slipway never puts secrets in the environment"},
			check: func(t *testing.T, m *manifest.Manifest) {
				s := svc(m, "a")
				if s.Environment["PGPASSWORD_FILE"] != "/run/secrets/db-password" || len(s.Secrets) != 1 {
					t.Errorf("a = %+v", s)
				}
			}},
		{name: "self and base_url", src: "[package]\nname = \"app\"\n[[service]]\nrun = \"./server\"\npublish = \"internal:3001\"\n[[service]]\nrun = \"./web\"\nenv = [\"API={server.base_url}\", \"ME={self.host}\"]\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				env := svc(m, "web").Environment
				if env["API"] != "http://server:3001" || env["ME"] != "web" {
					t.Errorf("env = %v", env)
				}
			}},
		{name: "docker member", src: "[package]\nname = \"app\"\n[[service]]\nrun = \"docker://ghcr.io/acme/api:1.2\"\npublish = \"internal:8080\"\ndomain = \"api.example.com\"\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				s := m.Spec.Services[0]
				if s.Name != "api" || s.Source.Image != "ghcr.io/acme/api:1.2" || m.Spec.Routes[0].Port != 8080 {
					t.Errorf("service = %+v routes %+v", s, m.Spec.Routes)
				}
			}},
		{name: "image by URL", src: "[package]\nname = \"app\"\n[[service]]\nrun = \"https://example.com/web-1.0-linux-x64.img\"\n", diags: []string{"error: service[0].run: a ply image fetched by URL has no Slipway equivalent"}},
		{name: "registry without version", src: "[package]\nname = \"app\"\n[[service]]\nrun = \"ply/redis\"\n",
			diags: []string{"warning: service[0].run: ply runs the newest redis"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if s := m.Spec.Services[0]; s.Name != "redis" || s.Source.Image != "redis:latest" {
					t.Errorf("service = %+v", s)
				}
			}},
		{name: "password override", src: "[stack]\nname = \"app\"\n[[app]]\nrun = \"postgres@17\"\nname = \"db\"\nparams = { database = \"demo\", password = \"dev\" }\n",
			diags: []string{"warning: app[0].params.password: the password param is a secret Slipway generates"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if v := svc(m, "db").Environment["POSTGRES_DB"]; v != "demo" {
					t.Errorf("POSTGRES_DB = %q", v)
				}
			}},
		{name: "named volume replaces the package's", src: "[package]\nname = \"app\"\n[[service]]\nrun = \"postgres@17\"\nname = \"db\"\nvolume = [\"pgdata:/var/lib/postgresql/data\"]\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				if mt := svc(m, "db").Mounts; len(mt) != 1 || mt[0].Volume != "pgdata" || len(m.Spec.Volumes) != 1 {
					t.Errorf("mounts = %+v volumes %+v", mt, m.Spec.Volumes)
				}
			}},
		{name: "stack env_file", src: "[stack]\nname = \"app\"\nenv_file = \"/etc/ply/app.env\"\n[[app]]\nrun = \"redis@7\"\n", diags: []string{"warning: stack.env_file: the env file /etc/ply/app.env is not read"}},
		{name: "grouped form with top-level sections", src: "[package]\nname = \"app\"\nversion = \"0.1.0\"\n[build]\ninclude = [\"app\"]\n[run]\nentrypoint = [\"./app\"]\nenv = { A = \"1\" }\nports = { web = 8090 }\n[health]\nport = 8090\n[volumes]\ndata = { path = \"/data\" }\n",
			diags: []string{"warning: health: ply's health gate is a TCP connect"},
			check: func(t *testing.T, m *manifest.Manifest) {
				s := m.Spec.Services[0]
				if s.Environment["A"] != "1" || len(s.Mounts) != 1 || s.Mounts[0].Target != "/data" {
					t.Errorf("service = %+v", s)
				}
			}},
		{name: "build command", src: "[package]\nname = \"app\"\n[build]\ncommand = \"make\"\n", diags: []string{"error: build.command: ply's build command runs in its builder image"}},
		{name: "flat scale and resources", src: "[package]\nname = \"app\"\n[scale]\nmin = 2\nmax = 4\n[resources]\nswap = \"1G\"\ncpu_weight = 25\nmem = \"64M\"\n",
			diags: []string{"warning: scale: autoscaling is not carried over", "warning: resources.swap:", "warning: resources.cpu_weight:"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if s := m.Spec.Services[0]; s.Replicas == nil || s.Replicas.N != 2 || s.Resources.MemoryBytes.N != 64<<20 {
					t.Errorf("service = %+v", s)
				}
			}},
		{name: "stop signal without SIG", src: "[package]\nname = \"app\"\n[run]\nstop_signal = \"quit\"\n", diags: []string{"warning: run.stop_signal: Slipway stops services with SIGTERM; set STOPSIGNAL SIGQUIT"}},
		{name: "default name from a path", src: "[package]\nname = \"app\"\n[[service]]\nrun = \"./my-server\"\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				if n := m.Spec.Services[0].Name; n != "my" {
					t.Errorf("name = %q (ply takes the part before the first dash)", n)
				}
			}},
	})
}

// TestImport_FlatIncludeOnce is misreading 4's other half: include was
// reported twice.
func TestImport_FlatIncludeOnce(t *testing.T) {
	t.Parallel()
	res, err := importer.Import(importer.Ply, []byte("[package]\nname = \"app\"\nbase = \"debian@13\"\ninclude = [\"x\"]\nbogus = 1\n"), importtest.Options)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range res.Diagnostics {
		if strings.Contains(d.Path, "include") {
			t.Errorf("include reported: %s", d)
		}
		if d.Path == "package.bogus" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("package.bogus reported %d times, want once: %v", n, res.Diagnostics)
	}
}
