package gordon_test

import (
	"testing"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/manifest/importer"
	"github.com/slipwayhq/slipway/manifest/importer/internal/importtest"
)

func TestImport_Golden(t *testing.T) {
	importtest.Golden(t, importer.Gordon, "testdata", map[string]bool{
		"minimal.toml": true,
		"dotted.toml":  true,
		"alpha.toml":   true,
		"forms.toml":   true,
	})
}

// TestImport_Mappings pins each mapping and each error on a small source.
func TestImport_Mappings(t *testing.T) {
	t.Parallel()
	const head = "name = \"app\"\n[services.web]\nimage = \"nginx:1.27\"\n"
	tests := []struct {
		name  string
		src   string
		diags []string // each a prefix of one diagnostic line
		check func(t *testing.T, m *manifest.Manifest)
	}{
		{name: "service env wins over app env", src: "name = \"app\"\n[env]\nA = \"app\"\nB = \"app\"\n[services.web]\nimage = \"nginx:1.27\"\n[services.web.env]\nA = \"svc\"\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				if env := m.Spec.Services[0].Environment; env["A"] != "svc" || env["B"] != "app" {
					t.Errorf("environment = %v", env)
				}
			}},
		{name: "dotted name normalized", src: "name = \"app\"\n[services.\"web.api\"]\nimage = \"nginx:1.27\"\n",
			diags: []string{`warning: services."web.api": service name "web.api" normalized to "web-api"`},
			check: func(t *testing.T, m *manifest.Manifest) {
				if m.Spec.Services[0].Name != "web-api" {
					t.Errorf("name = %q", m.Spec.Services[0].Name)
				}
			}},
		{name: "file secret", src: head + "[services.web.secrets]\nDB = { name = \"db\", as = \"file\" }\n",
			diags: []string{"warning: services.web.secrets.DB: secret \"db\" is a stored Slipway secret"},
			check: func(t *testing.T, m *manifest.Manifest) {
				s := m.Spec.Services[0]
				if len(s.Secrets) != 1 || s.Secrets[0].Target != "/run/secrets/DB" || s.Environment["DB_FILE"] != "/run/secrets/DB" {
					t.Errorf("secrets = %+v env = %v", s.Secrets, s.Environment)
				}
			}},
		{name: "env secret", src: head + "[services.web.secrets]\nKEY = \"api-key\"\n",
			diags: []string{"warning: services.web.secrets.KEY: Slipway never puts secrets in the environment"}},
		{name: "bad secret delivery", src: head + "[services.web.secrets]\nKEY = { name = \"k\", as = \"pipe\" }\n",
			diags: []string{"error: services.web.secrets.KEY.as:"}},
		{name: "http readiness", src: head + "[services.web.readiness]\ntype = \"http\"\npath = \"/up\"\nport = 80\ntimeout = \"1m\"\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				h := m.Spec.Services[0].Healthcheck
				if h == nil || h.Path != "/up" || h.Port.N != 80 || h.StartPeriodSeconds.N != 60 {
					t.Errorf("healthcheck = %+v", h)
				}
			}},
		{name: "readiness body match", src: head + "[services.web.readiness]\ntype = \"http\"\nport = 80\ncontains = \"ok\"\n",
			diags: []string{"warning: services.web.readiness.contains:"}},
		{name: "tcp readiness", src: head + "[services.web.readiness]\ntype = \"tcp\"\nport = 80\n",
			diags: []string{"warning: services.web.readiness.type: Slipway has no TCP health check"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if m.Spec.Services[0].Healthcheck != nil {
					t.Error("tcp readiness produced a health check")
				}
			}},
		{name: "public route", src: head + "[[services.web.http]]\nhost = \"A.example.com\"\nport = 80\ntls = \"always\"\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				if len(m.Spec.Routes) != 1 || m.Spec.Routes[0].Hostname != "a.example.com" || m.Spec.Routes[0].Visibility != manifest.VisibilityPublic {
					t.Errorf("routes = %+v", m.Spec.Routes)
				}
			}},
		{name: "tls never", src: head + "[[services.web.http]]\nhost = \"a.example.com\"\nport = 80\ntls = \"never\"\n",
			diags: []string{"warning: services.web.http[0].tls:"}},
		{name: "internal interface has no route", src: head + "[[services.web.http]]\nvisibility = \"internal\"\nport = 80\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				if len(m.Spec.Routes) != 0 {
					t.Errorf("routes = %+v", m.Spec.Routes)
				}
			}},
		{name: "internal interface with host", src: head + "[[services.web.http]]\nvisibility = \"internal\"\nport = 80\nhost = \"a.example.com\"\n",
			diags: []string{"error: services.web.http[0]: an internal interface takes no host or tls"}},
		{name: "volume", src: head + "[[services.web.volume]]\nname = \"Data\"\npath = \"/data/\"\n",
			diags: []string{"warning: services.web.volume[0].name:"},
			check: func(t *testing.T, m *manifest.Manifest) {
				s := m.Spec.Services[0]
				if len(m.Spec.Volumes) != 1 || s.Mounts[0].Volume != "data" || s.Mounts[0].Target != "/data" || s.Rollout.Order != manifest.RolloutStopFirst {
					t.Errorf("volumes %+v mounts %+v", m.Spec.Volumes, s.Mounts)
				}
			}},
		{name: "command is arguments", src: head + "command = [\"nginx\", \"-g\", \"daemon off;\"]\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				if s := m.Spec.Services[0]; len(s.Arguments) != 3 || s.Command != nil {
					t.Errorf("command %v arguments %v", s.Command, s.Arguments)
				}
			}},
		{name: "literal reference escaped", src: head + "[services.web.env]\nX = \"${{ not.a.ref }}\"\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				if v := m.Spec.Services[0].Environment["X"]; v != "$${{ not.a.ref }}" {
					t.Errorf("X = %q", v)
				}
			}},
		{name: "host routed twice", src: head + "[[services.web.http]]\nhost = \"a.example.com\"\nport = 80\n[services.api]\nimage = \"nginx:1\"\n[[services.api.http]]\nhost = \"a.example.com\"\nport = 80\n",
			diags: []string{"error: services: hostname a.example.com is routed twice"}},
		{name: "volume over managed dir", src: head + "[[services.web.volume]]\nname = \"x\"\npath = \"/run\"\n", diags: []string{"error: services.web: /run overlaps /run/secrets"}},
		{name: "control character", src: head + "[services.web.env]\nX = \"a\\u0001b\"\n", diags: []string{"error: services.web.env.X: the value contains the control character"}},
		{name: "tcp publishing", src: head + "[[services.web.tcp]]\nport = 1\n", diags: []string{"error: services.web.tcp:"}},
		{name: "udp publishing", src: head + "[[services.web.udp]]\nport = 1\n", diags: []string{"error: services.web.udp:"}},
		{name: "bind", src: head + "[[services.web.bind]]\nname = \"x\"\npath = \"/x\"\n", diags: []string{"error: services.web.bind:"}},
		{name: "devices", src: head + "devices = [\"gpu\"]\n", diags: []string{"error: services.web.devices:"}},
		{name: "database without a type", src: head + "[[services.web.database]]\nname = \"main\"\n", diags: []string{"error: services.web.database[0].type:"}},
		{name: "database and volume backups", src: head + "[[services.web.volume]]\nname = \"web-data\"\npath = \"/data\"\n[[services.web.database]]\nname = \"main\"\ntype = \"postgres\"\nschedule = \"weekly\"\n[[services.web.database]]\nname = \"other\"\ntype = \"postgres\"\nschedule = \"daily\"\n[services.web.backup]\npostgres = [\"main\"]\nvolume = [\"web-data\"]\n",
			diags: []string{"warning: services.web.database[0]: database \"main\" is dumped", "warning: services.web.database[1]: Slipway backs up one database", "warning: services.web.backup.volume:"},
			check: func(t *testing.T, m *manifest.Manifest) {
				pg := m.Spec.Services[0].Postgres
				if pg == nil || pg.Database != "main" || len(m.Spec.Backups) != 2 {
					t.Fatalf("postgres %+v, backups %+v", pg, m.Spec.Backups)
				}
				if b := m.Spec.Backups[0]; b.Name != "web-main" || b.Service != "web" || b.Schedule != "@weekly" {
					t.Errorf("database backup = %+v", b)
				}
				if b := m.Spec.Backups[1]; b.Name != "web-web-data" || b.Volume != "web-data" || b.Schedule != "@daily" {
					t.Errorf("volume backup = %+v", b)
				}
				if errs := manifest.Validate(m, manifest.ValidateOptions{}); len(errs) > 0 {
					t.Errorf("the translation does not validate: %v", errs)
				}
			}},
		{name: "backup of an undeclared database", src: head + "[services.web.backup]\npostgres = [\"main\"]\n", diags: []string{"error: services.web.backup.postgres:"}},
		{name: "shared network", src: head + "[[network.shared]]\nnetwork = \"b\"\n", diags: []string{"warning: network:"}},
		{name: "telemetry", src: head + "[telemetry]\nlogs = false\n", diags: []string{"warning: telemetry:"}},
		{name: "alpha form", src: "name = \"a\"\n[env]\nA = \"1\"\n[[service]]\nname = \"web\"\nimage = \"nginx:1\"\n[[service.http]]\nhost = \"a.example.com\"\nport = 80\n[service.readiness]\ntype = \"http\"\npath = \"/up\"\n[[service]]\nname = \"db\"\nimage = \"postgres:17\"\n",
			diags: []string{"warning: service: the v3 alpha [[service]] form"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if len(m.Spec.Services) != 2 || m.Spec.Services[0].Name != "web" || m.Spec.Services[1].Name != "db" || m.Spec.Services[0].Environment["A"] != "1" {
					t.Fatalf("services = %+v", m.Spec.Services)
				}
				if h := m.Spec.Services[0].Healthcheck; h == nil || h.Port.N != 80 || len(m.Spec.Routes) != 1 {
					t.Errorf("healthcheck %+v routes %+v", h, m.Spec.Routes)
				}
			}},
		{name: "alpha plural form", src: "name = \"a\"\n[[services]]\nname = \"web\"\nimage = \"nginx:1\"\n",
			diags: []string{"warning: services: the v3 alpha [[services]] form"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if len(m.Spec.Services) != 1 || m.Spec.Services[0].Name != "web" {
					t.Errorf("services = %+v", m.Spec.Services)
				}
			}},
		{name: "alpha entry without a name", src: "name = \"a\"\n[[service]]\nimage = \"nginx:1\"\n", diags: []string{"error: service[0].name: a [[service]] entry needs a name"}},
		{name: "rcon", src: head + "[[services.web.rcon]]\nentrypoint = \"tcp\"\nport = 28016\npublish = \"127.0.0.1:28016\"\n", diags: []string{"error: services.web.rcon: RCON interfaces"}},
		// gordon's own parser accepts readiness without a port when the
		// service has one interface to probe (issue #24, misreading 1).
		{name: "http readiness port from the only interface", src: head + "[services.web.readiness]\ntype = \"http\"\npath = \"/healthz\"\n[[services.web.http]]\nhost = \"a.example.com\"\nport = 8080\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				if h := m.Spec.Services[0].Healthcheck; h == nil || h.Port.N != 8080 || h.Path != "/healthz" {
					t.Errorf("healthcheck = %+v", h)
				}
			}},
		{name: "http readiness port from an internal interface", src: head + "[services.web.readiness]\ntype = \"http\"\npath = \"/healthz\"\n[[services.web.http]]\nvisibility = \"internal\"\nport = 9090\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				if h := m.Spec.Services[0].Healthcheck; h == nil || h.Port.N != 9090 {
					t.Errorf("healthcheck = %+v", h)
				}
			}},
		{name: "http readiness with several interfaces needs a port", src: head + "[services.web.readiness]\ntype = \"http\"\npath = \"/h\"\n[[services.web.http]]\nhost = \"a.example.com\"\nport = 80\n[[services.web.http]]\nvisibility = \"internal\"\nport = 9090\n",
			diags: []string{"error: services.web.readiness.port: the service declares 2 TCP-capable interfaces"}},
		{name: "http readiness without any interface", src: head + "[services.web.readiness]\ntype = \"http\"\npath = \"/h\"\n",
			diags: []string{"error: services.web.readiness.port: an http readiness check needs a port, and the service declares no HTTP or TCP interface"}},
		{name: "go durations", src: head + "stop_grace = \"1m30s\"\n[services.web.readiness]\ntype = \"http\"\nport = 80\ntimeout = \"1.5s\"\n",
			diags: []string{"warning: services.web.stop_grace:"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if h := m.Spec.Services[0].Healthcheck; h == nil || h.StartPeriodSeconds.N != 2 {
					t.Errorf("healthcheck = %+v", h)
				}
			}},
		{name: "unknown field", src: head + "replicas = 3\n", diags: []string{"error: services.web.replicas: unknown field"}},
		{name: "invalid image", src: "name = \"app\"\n[services.web]\nimage = \"https://x/y\"\n", diags: []string{"error: services.web.image:"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if len(m.Spec.Services) != 0 {
					t.Error("a service with an invalid image was kept")
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := importer.Import(importer.Gordon, []byte(tt.src), importer.Options{})
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
		importtest.Fuzz(t, importer.Gordon, data)
	})
}
