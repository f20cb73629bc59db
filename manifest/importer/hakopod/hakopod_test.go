package hakopod_test

import (
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/manifest/importer"
	"github.com/slipwayhq/slipway/manifest/importer/internal/importtest"
)

func TestImport_Golden(t *testing.T) {
	importtest.Golden(t, importer.Hakopod, "testdata", map[string]bool{
		"shop.toml":   true,
		"full.toml":   true,
		"export.toml": true,
	})
}

func TestImport_Mappings(t *testing.T) {
	t.Parallel()
	const head = "schema_version = 1\nname = \"app\"\n[services.web]\nimage = \"nginx:1.27\"\nport = 80\n"
	svc := func(m *manifest.Manifest, name string) *manifest.Service {
		for i := range m.Spec.Services {
			if m.Spec.Services[i].Name == name {
				return &m.Spec.Services[i]
			}
		}
		return nil
	}
	tests := []struct {
		name  string
		src   string
		diags []string
		check func(t *testing.T, m *manifest.Manifest)
	}{
		// hakopod reads a missing schema_version as 1.
		{name: "schema_version optional", src: "name = \"a\"\n[services.web]\nimage = \"nginx:1\"\n"},
		{name: "schema_version 2", src: "schema_version = 2\nname = \"a\"\n[services.web]\nimage = \"nginx:1\"\n", diags: []string{"error: schema_version: only schema_version = 1"}},
		{name: "default size small", src: head, check: func(t *testing.T, m *manifest.Manifest) {
			r := m.Spec.Services[0].Resources
			if r.CPUMillis.N != 600 || r.MemoryBytes.N != 308<<20 {
				t.Errorf("resources = %d %d", r.CPUMillis.N, r.MemoryBytes.N)
			}
		}},
		{name: "size large", src: head + "size = \"large\"\n", check: func(t *testing.T, m *manifest.Manifest) {
			r := m.Spec.Services[0].Resources
			if r.CPUMillis.N != 2400 || r.MemoryBytes.N != 1229<<20 {
				t.Errorf("resources = %d %d", r.CPUMillis.N, r.MemoryBytes.N)
			}
		}},
		{name: "resource quantities", src: head + "[services.web.resources]\ncpu_limit = \"250m\"\nmemory_limit = \"512M\"\n", check: func(t *testing.T, m *manifest.Manifest) {
			r := m.Spec.Services[0].Resources
			if r.CPUMillis.N != 250 || r.MemoryBytes.N != 512e6 {
				t.Errorf("resources = %d %d", r.CPUMillis.N, r.MemoryBytes.N)
			}
		}},
		{name: "fractional cores", src: head + "[services.web.resources]\ncpu_limit = \"1.5\"\nmemory_limit = \"1Gi\"\n", check: func(t *testing.T, m *manifest.Manifest) {
			r := m.Spec.Services[0].Resources
			if r.CPUMillis.N != 1500 || r.MemoryBytes.N != 1<<30 {
				t.Errorf("resources = %d %d", r.CPUMillis.N, r.MemoryBytes.N)
			}
		}},
		{name: "bad quantity", src: head + "[services.web.resources]\nmemory_limit = \"1.5 bytes\"\n", diags: []string{"error: services.web.resources.memory_limit:"}},
		{name: "requests dropped", src: head + "[services.web.resources]\ncpu_request = \"100m\"\n", diags: []string{"warning: services.web.resources.cpu_request:"}},
		{name: "inject_env", src: "schema_version = 1\nname = \"a\"\ninject_env = true\n[env]\nA = \"1\"\n[services.web]\nimage = \"nginx:1\"\n[services.web.env]\nB = \"2\"\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				if env := m.Spec.Services[0].Environment; env["A"] != "1" || env["B"] != "2" {
					t.Errorf("env = %v", env)
				}
			}},
		{name: "env without inject_env", src: "schema_version = 1\nname = \"a\"\n[env]\nA = \"1\"\n[services.web]\nimage = \"nginx:1\"\n",
			diags: []string{"warning: env: [env] is not passed"}},
		{name: "secret ref", src: head + "[services.web.secrets]\nDATABASE_URL = { ref = \"database-url\" }\n",
			diags: []string{"warning: services.web.secrets.DATABASE_URL:"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if s := m.Spec.Services[0].Secrets; len(s) != 1 || s[0].Name != "database-url" || s[0].Target != "/run/secrets/DATABASE_URL" {
					t.Errorf("secrets = %+v", s)
				}
			}},
		{name: "update strategy recreate", src: head + "update_strategy = \"recreate\"\n", check: func(t *testing.T, m *manifest.Manifest) {
			if r := m.Spec.Services[0].Rollout; r == nil || r.Order != manifest.RolloutStopFirst {
				t.Errorf("rollout = %+v", r)
			}
		}},
		{name: "suspended", src: head + "replicas = 3\nsuspended = true\n", diags: []string{"warning: services.web.suspended:"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if r := m.Spec.Services[0].Replicas; r == nil || r.N != 0 {
					t.Errorf("replicas = %+v", r)
				}
			}},
		{name: "healthcheck", src: head + "healthcheck = \"/up\"\n", check: func(t *testing.T, m *manifest.Manifest) {
			if h := m.Spec.Services[0].Healthcheck; h == nil || h.Port.N != 80 || h.Path != "/up" {
				t.Errorf("healthcheck = %+v", h)
			}
		}},
		{name: "public with domain", src: head + "public = true\n[domains]\n\"www.example.com\" = \"web\"\n", check: func(t *testing.T, m *manifest.Manifest) {
			if len(m.Spec.Routes) != 1 || m.Spec.Routes[0].Port != 80 || m.Spec.Routes[0].Hostname != "www.example.com" {
				t.Errorf("routes = %+v", m.Spec.Routes)
			}
		}},
		{name: "public without domain", src: head + "public = true\n", diags: []string{"warning: services.web.public: hakopod's generated public hostname"}},
		{name: "domain to private service", src: head + "[domains]\n\"www.example.com\" = \"web\"\n", diags: []string{"error: domains.\"www.example.com\":"}},
		{name: "scheduled job", src: head + "[services.report]\nimage = \"nginx:1.27\"\nargs = [\"report\"]\n[services.report.job]\nschedule = \"30 2 * * *\"\n",
			diags: []string{"warning: services.report.job.schedule:"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if len(m.Spec.Jobs) != 1 || m.Spec.Jobs[0].Schedule != "30 2 * * *" || m.Spec.Jobs[0].Run != manifest.JobRunSchedule {
					t.Fatalf("jobs = %+v", m.Spec.Jobs)
				}
				if errs := manifest.Validate(m, manifest.ValidateOptions{}); len(errs) > 0 {
					t.Errorf("the translation does not validate: %v", errs)
				}
			}},
		{name: "bad schedule", src: head + "[services.report]\nimage = \"nginx:1.27\"\n[services.report.job]\nschedule = \"nightly\"\n", diags: []string{"error: services.report.job.schedule:"}},
		{name: "job", src: head + "[services.migrate]\nimage = \"nginx:1.27\"\ncommand = [\"migrate\"]\nargs = [\"up\"]\n[services.migrate.job]\ntimeout_seconds = 60\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				// The job runs its holder service's command and arguments.
				s := svc(m, "migrate")
				if len(m.Spec.Jobs) != 1 || m.Spec.Jobs[0].Service != "migrate" || m.Spec.Jobs[0].Command != nil || strings.Join(s.Command, " ") != "migrate" || strings.Join(s.Arguments, " ") != "up" || m.Spec.Jobs[0].TimeoutSeconds.N != 60 {
					t.Errorf("jobs = %+v", m.Spec.Jobs)
				}
				if s := svc(m, "migrate"); s.Replicas == nil || s.Replicas.N != 0 {
					t.Errorf("job holder replicas = %+v", s.Replicas)
				}
			}},
		{name: "depends_on", src: head + "depends_on = [\"db\"]\n[services.db]\nimage = \"postgres:17\"\n", check: func(t *testing.T, m *manifest.Manifest) {
			if d := svc(m, "web").DependsOn; len(d) != 1 || d[0] != "db" {
				t.Errorf("depends_on = %v", d)
			}
		}},
		{name: "legacy volume", src: head + "volume = { mount_path = \"/data\", size_gib = 5, storage_class = \"fast\" }\n",
			diags: []string{"warning: services.web.volume.size_gib:", "warning: services.web.volume.storage_class:"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if s := svc(m, "web"); len(s.Mounts) != 1 || s.Mounts[0].Volume != "web-data" || s.Rollout.Order != manifest.RolloutStopFirst {
					t.Errorf("mounts = %+v", s.Mounts)
				}
			}},
		{name: "named volume sub_path", src: "schema_version = 1\nname = \"a\"\n[volumes.up]\n[services.web]\nimage = \"nginx:1\"\nmounts = [{ volume = \"up\", mount_path = \"/x\", sub_path = \"a\" }]\n",
			diags: []string{"error: services.web.mounts[0].sub_path:"}},
		{name: "inline file", src: head + "files = [{ name = \"c\", mount_path = \"/etc/c.conf\", content = \"x\" }]\n", check: func(t *testing.T, m *manifest.Manifest) {
			if f := m.Spec.Services[0].Files; len(f) != 1 || f[0].Target != "/etc/c.conf" || f[0].Content != "x" {
				t.Errorf("files = %+v", f)
			}
		}},
		{name: "dependency cycle", src: head + "depends_on = [\"api\"]\n[services.api]\nimage = \"nginx:1\"\ndepends_on = [\"web\"]\n",
			diags: []string{"error: services.web: web and api depend on each other"}},
		{name: "port remap", src: head + "[[services.web.ports]]\nname = \"m\"\nport = 9090\ntarget_port = 9091\n", diags: []string{"warning: services.web.ports[0].target_port:"}},
		{name: "file mode", src: head + "files = [{ mount_path = \"/etc/a\", content = \"x\", mode = 0o600 }, { mount_path = \"/etc/b\", content = \"y\", mode = \"755\" }]\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				if f := m.Spec.Services[0].Files; len(f) != 2 || f[0].Mode != "0600" || f[1].Mode != "0755" {
					t.Errorf("files = %+v", f)
				}
			}},
		{name: "public_tcp", src: head + "public_tcp = [{ port = 25 }]\n", diags: []string{"error: services.web.public_tcp:"}},
		{name: "gpu", src: head + "gpu = { count = 1 }\n", diags: []string{"error: services.web.gpu:"}},
		{name: "serverless", src: head + "[services.web.serverless]\nidle_seconds = 60\n", diags: []string{"error: services.web.serverless:"}},
		{name: "kubernetes", src: head + "[services.web.kubernetes]\nservice = \"x\"\n", diags: []string{"error: services.web.kubernetes:"}},
		{name: "aws_identity", src: head + "aws_identity = \"x\"\n", diags: []string{"error: services.web.aws_identity:"}},
		{name: "container_daemon", src: head + "container_daemon = \"x\"\n", diags: []string{"error: services.web.container_daemon:"}},
		{name: "network policy", src: head + "[services.web.network_access]\nfrom = []\n", diags: []string{"warning: services.web.network_access:"}},
		{name: "autoscaling", src: head + "[services.web.autoscaling]\nmax_replicas = 3\n", diags: []string{"warning: services.web.autoscaling:"}},
		{name: "fs_group", src: head + "fs_group = 1\n", diags: []string{"warning: services.web.fs_group:"}},
		{name: "private_egress", src: head + "private_egress = [\"db\"]\n", diags: []string{"warning: services.web.private_egress:"}},
		{name: "database client profiles", src: head + "[services.web.env]\nDB = \"x\"\n[services.web.database_client_profiles]\nDB = \"libpq-postgres-url-v1\"\n", diags: []string{"warning: services.web.database_client_profiles: database client profiles"}},
		{name: "recovery", src: "name = \"a\"\n[recovery]\non_failure = \"safe\"\n[services.web]\nimage = \"nginx:1\"\n", diags: []string{"warning: recovery: the failed-deployment recovery policy"}},
		{name: "autoscaling minimum", src: head + "[services.web.autoscaling]\nmin_replicas = 2\nmax_replicas = 5\n", diags: []string{"warning: services.web.autoscaling:"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if r := m.Spec.Services[0].Replicas; r == nil || r.N != 2 {
					t.Errorf("replicas = %+v", r)
				}
			}},
		{name: "empty job table is a job", src: head + "[services.web.job]\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				if len(m.Spec.Jobs) != 1 {
					t.Errorf("jobs = %+v", m.Spec.Jobs)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := importer.Import(importer.Hakopod, []byte(tt.src), importer.Options{})
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

// TestImport_FullExportForm is issue #24's misreading 2: hakopod's full
// export form writes every field, unset ones as empty or zero values, and
// those are not features in use.
func TestImport_FullExportForm(t *testing.T) {
	t.Parallel()
	src := `schema_version = 1
name = 'app'
[services]
[services.main]
architecture = ''
run_as_user = 0
run_as_group = 0
fs_group = 0
read_only_root_filesystem = false
working_dir = ''
termination_grace_seconds = 0
certificate_mounts = []
mounts = []
temporary_mounts = []
image = 'nginx:1.27'
port = 8080
public_tcp = []
ports = []
public = false
size = ''
replicas = 0
update_strategy = ''
healthcheck = ''
command = []
args = []
depends_on = []
networks = ['default']
restart_nonce = ''
registry_credential = ''
aws_identity = ''
[services.main.volume]
mount_path = '/data'
size_gib = 5
storage_class = ''
[services.main.env]
EMPTY = ''
[services.main.secrets]
[services.worker]
image = 'nginx:1.27'
port = 0
[[services.worker.mounts]]
volume = 'shared'
mount_path = '/shared'
read_only = false
sub_path = ''
[networks]
[networks.default]
internal = false
virtual_network = ''
segment = ''
[volumes.shared]
size_gib = 1
storage_class = ''
`
	res, err := importer.Import(importer.Hakopod, []byte(src), importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Diagnostics {
		if !strings.Contains(d.Path, "size_gib") {
			t.Errorf("unexpected diagnostic for an unset field: %s", d)
		}
	}
	if !res.OK() {
		t.Fatal("not faithful")
	}
	m := res.Manifest
	if s := m.Spec.Services[0]; s.Name != "main" || s.Environment["EMPTY"] != "" || len(s.Environment) != 1 || s.Replicas != nil || s.Healthcheck != nil || len(s.Mounts) != 1 {
		t.Errorf("main = %+v", s)
	}
	importtest.RoundTrip(t, m)
}

// TestImport_VolumeAndMounts is misreading 3: a service with both the legacy
// volume and named mounts gets all of them.
func TestImport_VolumeAndMounts(t *testing.T) {
	t.Parallel()
	src := "name = \"app\"\n[volumes.uploads]\n[services.web]\nimage = \"nginx:1\"\n[services.web.volume]\nmount_path = \"/data\"\n[[services.web.mounts]]\nvolume = \"uploads\"\nmount_path = \"/uploads\"\nread_only = true\n"
	res, err := importer.Import(importer.Hakopod, []byte(src), importer.Options{})
	if err != nil || !res.OK() {
		t.Fatalf("%+v %v", res.Diagnostics, err)
	}
	mounts := res.Manifest.Spec.Services[0].Mounts
	if len(mounts) != 2 || mounts[0].Target != "/data" || mounts[1].Volume != "uploads" || !mounts[1].ReadOnly {
		t.Errorf("mounts = %+v", mounts)
	}
	if r := res.Manifest.Spec.Services[0].Rollout; r == nil || r.Order != manifest.RolloutStopFirst {
		t.Errorf("rollout = %+v", r)
	}
}

// TestImport_TemplatePlaceholders is the message fix of issue #24: the
// values hakopod's planner fills become Slipway variables, each with a
// warning, instead of literal text.
func TestImport_TemplatePlaceholders(t *testing.T) {
	t.Parallel()
	src := "name = \"app\"\ninject_env = true\n[env]\nBUCKET = \"{{config.storage-bucket}}\"\n[services.web]\nimage = \"nginx:1\"\n[services.web.env]\nHOST = \"{{site_host}}\"\nURL = \"https://catalog.example.test/app\"\nMAIL = \"{{config.admin-email}} <{{config.admin-email}}>\"\nLITERAL = \"{{not.a.placeholder}} ${{ x }}\"\n"
	res, err := importer.Import(importer.Hakopod, []byte(src), importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	importtest.Expect(t, res, []string{
		"warning: env.BUCKET: hakopod template value storage-bucket has no default",
		"warning: services.web.env.HOST: hakopod template value site_host has no default",
		"warning: services.web.env.URL: hakopod template value site_url has no default",
		"warning: services.web.env.MAIL: hakopod template value admin-email has no default",
	})
	env := res.Manifest.Spec.Services[0].Environment
	for k, want := range map[string]string{
		"BUCKET":  "${{ vars.storage-bucket }}",
		"HOST":    "${{ vars.site_host }}",
		"URL":     "${{ vars.site_url }}/app",
		"MAIL":    "${{ vars.admin-email }} <${{ vars.admin-email }}>",
		"LITERAL": "{{not.a.placeholder}} $${{ x }}",
	} {
		if env[k] != want {
			t.Errorf("%s = %q, want %q", k, env[k], want)
		}
	}
	if v := res.Manifest.Spec.Variables; len(v) != 4 {
		t.Errorf("variables = %v", v)
	}
}

func FuzzImport(f *testing.F) {
	importtest.Seeds(f, "testdata")
	f.Fuzz(func(t *testing.T, data []byte) {
		importtest.Fuzz(t, importer.Hakopod, data)
	})
}
