package manifest_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
)

// svc is a valid image service named web; svcNamed another one.
const svc = "[[spec.services]]\nname = \"web\"\n[spec.services.source]\ntype = \"image\"\nimage = \"ghcr.io/example/web:1\"\n"

func svcNamed(name, extra string) string {
	return "[[spec.services]]\nname = \"" + name + "\"\n" + extra + "\n[spec.services.source]\ntype = \"image\"\nimage = \"ghcr.io/example/" + name + ":1\"\n"
}

const repoManifest = "[spec.manifest]\npath = \"deploy/app.toml\"\n[spec.manifest.repository]\nurl = \"https://example.com/app.git\"\nbranch = \"main\"\n"

type validateCase struct {
	name string
	doc  string // appended to header
	opts manifest.ValidateOptions
	want []wantError // path and code; nil means valid
}

func runValidateCases(t *testing.T, tests []validateCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := manifest.Decode([]byte(header+tt.doc), "toml")
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			matchErrors(t, manifest.Validate(m, tt.opts), tt.want)
		})
	}
}

func TestValidate_Header(t *testing.T) {
	t.Parallel()
	runValidateCases(t, []validateCase{
		{name: "empty application is valid", doc: ""},
		{name: "piqueld version accepted", doc: ""},
	})
	tests := []struct {
		name, doc string
		want      []wantError
	}{
		{"missing everything", "", []wantError{{path: "api_version", code: "api_version_invalid"}, {path: "kind", code: "kind_invalid"}, {path: "metadata.name", code: "name_invalid", message: "is required"}}},
		{"wrong version and kind", "api_version = \"v1\"\nkind = \"Deployment\"\n[metadata]\nname = \"a\"\n", []wantError{{path: "api_version", code: "api_version_invalid", message: `"v1"`}, {path: "kind", code: "kind_invalid"}}},
		{"piqueld", "api_version = \"piqueld.dev/v1alpha1\"\nkind = \"Application\"\n[metadata]\nname = \"a\"\n", nil},
	}
	for _, tt := range tests {
		m, err := manifest.Decode([]byte(tt.doc), "toml")
		if err != nil {
			t.Fatal(err)
		}
		matchErrors(t, manifest.Validate(m, manifest.ValidateOptions{}), tt.want)
	}
}

func TestValidate_Names(t *testing.T) {
	t.Parallel()
	valid := []string{"a", "web", "web-2", "a1", strings.Repeat("a", 63)}
	invalid := []string{"", "Web", "1web", "-web", "web-", "we_b", "wéb", strings.Repeat("a", 64), "web.app"}
	for _, n := range valid {
		m := &manifest.Manifest{APIVersion: manifest.APIVersion, Kind: manifest.Kind, Metadata: manifest.Metadata{Name: n}}
		if errs := manifest.Validate(m, manifest.ValidateOptions{}); len(errs) != 0 {
			t.Errorf("name %q: %v", n, errs)
		}
	}
	for _, n := range invalid {
		m := &manifest.Manifest{APIVersion: manifest.APIVersion, Kind: manifest.Kind, Metadata: manifest.Metadata{Name: n}}
		matchErrors(t, manifest.Validate(m, manifest.ValidateOptions{}), []wantError{{path: "metadata.name", code: "name_invalid"}})
	}
}

func TestValidate_Images(t *testing.T) {
	t.Parallel()
	valid := []string{
		"nginx", "nginx:1.27", "library/nginx", "docker.io/library/nginx:latest", "GHCR.IO/example/app:v1",
		"localhost:5000/app", "registry.example.com:5000/team/app:1.0-rc.1",
		"app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"ghcr.io/a/b:1@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"a/b__c/d-e.f", "10.0.0.1:5000/app",
	}
	invalid := map[string]string{
		"":                                "is required",
		"https://ghcr.io/example/app":     "URL scheme",
		"user:secret@ghcr.io/example/app": "credentials",
		"ghcr.io/example/App:1":           "lowercase",
		"ghcr.io/example/app:-bad":        "tag",
		"ghcr.io/example/app:" + strings.Repeat("t", 129): "tag",
		"ghcr.io/example/app@sha256:abc":                  "digest",
		"ghcr.io/example/app@md5:0123":                    "digest",
		"[::1]:5000/app":                                  "IPv6",
		"ghcr.io/example//app":                            "malformed",
		"ghcr.io/example/app:1 ":                          "whitespace",
		"ghcr.io:99999/app":                               "port",
		"ghcr.io/":                                        "no repository name",
	}
	for _, ref := range valid {
		m := &manifest.Manifest{APIVersion: manifest.APIVersion, Kind: manifest.Kind, Metadata: manifest.Metadata{Name: "a"},
			Spec: manifest.Spec{Services: []manifest.Service{{Name: "web", Source: manifest.Source{Type: "image", Image: ref}}}}}
		if errs := manifest.Validate(m, manifest.ValidateOptions{}); len(errs) != 0 {
			t.Errorf("image %q: %v", ref, errs)
		}
	}
	for ref, msg := range invalid {
		m := &manifest.Manifest{APIVersion: manifest.APIVersion, Kind: manifest.Kind, Metadata: manifest.Metadata{Name: "a"},
			Spec: manifest.Spec{Services: []manifest.Service{{Name: "web", Source: manifest.Source{Type: "image", Image: ref}}}}}
		errs := manifest.Validate(m, manifest.ValidateOptions{})
		if len(errs) != 1 || errs[0].Code != "image_reference_invalid" || errs[0].Path != "spec.services[0].source.image" || !strings.Contains(errs[0].Message, msg) {
			t.Errorf("image %q: got %v, want image_reference_invalid mentioning %q", ref, errs, msg)
		}
	}
	if got := manifest.CanonicalImage("GHCR.IO/example/app:V1"); got != "ghcr.io/example/app:V1" {
		t.Errorf("CanonicalImage = %q", got)
	}
}

func TestValidate_Services(t *testing.T) {
	t.Parallel()
	runValidateCases(t, []validateCase{
		{name: "valid service", doc: svc},
		{name: "duplicate service", doc: svc + svc, want: []wantError{{path: "spec.services[1].name", code: "service_name_duplicate"}}},
		{name: "unknown source type", doc: "[[spec.services]]\nname = \"web\"\n[spec.services.source]\ntype = \"zip\"\n", want: []wantError{{path: "spec.services[0].source.type", code: "source_type_invalid"}}},
		{name: "missing source type", doc: "[[spec.services]]\nname = \"web\"\n", want: []wantError{{path: "spec.services[0].source.type", code: "field_required"}}},
		{name: "image with build", doc: svc + "[spec.services.source.build]\ntype = \"docker\"\n", want: []wantError{{path: "spec.services[0].source.build", code: "source_field_conflict"}}},
		{name: "git source valid", doc: "[[spec.services]]\nname = \"web\"\n[spec.services.source]\ntype = \"git\"\n[spec.services.source.repository]\nurl = \"git@example.com:team/app.git\"\nbranch = \"release/1.x\"\n[spec.services.source.build]\ntype = \"docker\"\ndockerfile = \"services/web/Dockerfile\"\ncontext = \".\"\ntarget = \"runtime\"\nargs = { VITE_ORIGIN = \"https://example.com\" }\n"},
		{name: "git source mistakes", doc: "[[spec.services]]\nname = \"web\"\n[spec.services.source]\ntype = \"git\"\n[spec.services.source.repository]\nurl = \"ext::sh -c evil\"\nbranch = \"bad..branch\"\ncommit = \"abc\"\n[spec.services.source.build]\ntype = \"buildpack\"\ndockerfile = \"../Dockerfile\"\ncontext = \".git/x\"\ntarget = \"-x\"\nargs = { \"A=B\" = \"1\" }\n",
			want: []wantError{
				{path: "spec.services[0].source.repository.url", code: "repository_url_invalid"},
				{path: "spec.services[0].source.repository.branch", code: "branch_invalid"},
				{path: "spec.services[0].source.repository.commit", code: "commit_invalid"},
				{path: "spec.services[0].source.build.type", code: "build_type_invalid"},
				{path: "spec.services[0].source.build.dockerfile", code: "build_path_invalid", message: "leaves the repository"},
				{path: "spec.services[0].source.build.context", code: "build_path_invalid", message: ".git"},
				{path: "spec.services[0].source.build.target", code: "build_target_invalid"},
				{path: `spec.services[0].source.build.args."A=B"`, code: "build_arg_invalid"},
			}},
		{name: "repository URL schemes", doc: "[[spec.services]]\nname = \"web\"\n[spec.services.source]\ntype = \"git\"\nrepository = { url = \"ftp://example.com/a.git\", branch = \"main\" }\nbuild = { type = \"docker\" }\n[[spec.services]]\nname = \"api\"\n[spec.services.source]\ntype = \"git\"\nrepository = { url = \"https://u:p@example.com/a.git\", branch = \"main\" }\nbuild = { type = \"docker\" }\n",
			want: []wantError{{path: "spec.services[0].source.repository.url", code: "repository_url_invalid", message: "scheme"}, {path: "spec.services[1].source.repository.url", code: "repository_url_invalid", message: "password"}}},
		{name: "git without repository or build", doc: "[[spec.services]]\nname = \"web\"\n[spec.services.source]\ntype = \"git\"\n",
			want: []wantError{{path: "spec.services[0].source.repository", code: "field_required"}, {path: "spec.services[0].source.build", code: "field_required"}}},
		{name: "self needs a repository", doc: "[[spec.services]]\nname = \"web\"\n[spec.services.source]\ntype = \"git\"\nrepository = \"self\"\nbuild = { type = \"docker\" }\n",
			want: []wantError{{path: "spec.services[0].source.repository", code: "self_requires_repository"}}},
		{name: "self with spec.manifest", doc: repoManifest + "[[spec.services]]\nname = \"web\"\n[spec.services.source]\ntype = \"git\"\nrepository = \"self\"\nbuild = { type = \"docker\" }\n"},
		{name: "self in a fetched manifest", opts: manifest.ValidateOptions{RepositoryBacked: true}, doc: "[[spec.services]]\nname = \"web\"\n[spec.services.source]\ntype = \"git\"\nrepository = \"self\"\nbuild = { type = \"docker\" }\n"},
		{name: "replicas range", doc: svcNamed("a", "replicas = 0") + svcNamed("b", "replicas = 100") + svcNamed("c", "replicas = 101") + svcNamed("d", "replicas = -1"),
			want: []wantError{{path: "spec.services[2].replicas", code: "budget_exceeded", message: "101"}, {path: "spec.services[3].replicas", code: "value_out_of_range"}}},
		{name: "replicas reference checked after rendering", doc: "[spec.variables]\nr = 500\n" + svcNamed("a", "replicas = \"${{ vars.r }}\"")},
		{name: "leftover reference in a rendered manifest", opts: manifest.ValidateOptions{Rendered: true}, doc: svcNamed("a", "replicas = \"${{ vars.r }}\""),
			want: []wantError{{path: "spec.services[0].replicas", code: "reference_unrendered"}}},
		{name: "environment", doc: svc + "[spec.services.environment]\nOK = \"fine\\nmultiline\"\n\"\" = \"x\"\n\"A=B\" = \"x\"\nBELL = \"ring\\u0007\"\nSLIPWAY_INGRESS_PROXIES = \"x\"\nREF = \"${{ vars.x }}\\u0000\"\n[spec.variables]\nx = 1\n",
			want: []wantError{
				{path: `spec.services[0].environment.""`, code: "environment_key_invalid"},
				{path: `spec.services[0].environment."A=B"`, code: "environment_key_invalid"},
				{path: "spec.services[0].environment.BELL", code: "environment_value_invalid", message: "control character"},
				{path: "spec.services[0].environment.SLIPWAY_INGRESS_PROXIES", code: "environment_key_reserved"},
			}},
		{name: "control character after non-ASCII text", doc: svc + "[spec.services.environment]\nA = \"caf\u00e9\\u0001\"\nB = \"caf\u00e9\\ttab\"\n",
			want: []wantError{{path: "spec.services[0].environment.A", code: "environment_value_invalid"}}},
		{name: "command control characters", doc: svcNamed("a", "command = [\"run\", \"a\\u0000b\"]\narguments = [\"--x\"]"),
			want: []wantError{{path: "spec.services[0].command[1]", code: "command_invalid"}}},
		{name: "resources need cpu or memory", doc: svc + "[spec.services.resources]\n", want: []wantError{{path: "spec.services[0].resources", code: "resources_empty"}}},
		{name: "resources limits", doc: svc + "[spec.services.resources]\ncpu_millis = 0\nmemory_bytes = 1024\n",
			want: []wantError{{path: "spec.services[0].resources.cpu_millis", code: "value_out_of_range"}, {path: "spec.services[0].resources.memory_bytes", code: "value_out_of_range"}}},
		{name: "resources memory only", doc: svc + "[spec.services.resources]\nmemory_bytes = 536870912\n"},
		{name: "telemetry receivers", doc: svcNamed("a", "receives_telemetry = true\nreplicas = 2") + svcNamed("b", "receives_telemetry = true"),
			want: []wantError{{path: "spec.services[0].replicas", code: "telemetry_receiver_replicas"}, {path: "spec.services[1].receives_telemetry", code: "telemetry_receiver_duplicate"}}},
		{name: "rollout", doc: svcNamed("a", "rollout = { order = \"blue-green\", monitor_seconds = 0 }") + svcNamed("b", "rollout = { monitor_seconds = 3601 }") + svcNamed("c", "rollout = { order = \"stop-first\", monitor_seconds = 3600 }") + svcNamed("d", "[spec.services.rollout]"),
			want: []wantError{{path: "spec.services[0].rollout.order", code: "rollout_order_invalid"}, {path: "spec.services[0].rollout.monitor_seconds", code: "rollout_monitor_invalid"}, {path: "spec.services[1].rollout.monitor_seconds", code: "rollout_monitor_invalid"}}},
	})
}

func TestValidate_Healthchecks(t *testing.T) {
	t.Parallel()
	runValidateCases(t, []validateCase{
		{name: "http valid", doc: svc + "[spec.services.healthcheck]\ntype = \"http\"\nport = 8080\npath = \"/ready?full=1\"\ninterval_seconds = 3600\ntimeout_seconds = 3600\nstart_period_seconds = 3600\nretries = 100\n"},
		{name: "command valid", doc: svc + "[spec.services.healthcheck]\ntype = \"command\"\ncommand = [\"pg_isready\"]\n"},
		{name: "http mistakes", doc: svc + "[spec.services.healthcheck]\ntype = \"http\"\npath = \"health\"\ncommand = [\"x\"]\ninterval_seconds = 2\n",
			want: []wantError{
				{path: "spec.services[0].healthcheck.port", code: "field_required"},
				{path: "spec.services[0].healthcheck.path", code: "healthcheck_path_invalid"},
				{path: "spec.services[0].healthcheck.command", code: "healthcheck_field_conflict"},
				{path: "spec.services[0].healthcheck.timeout_seconds", code: "healthcheck_timeout_exceeds_interval", message: "(3) cannot exceed interval_seconds (2)"},
			}},
		{name: "budgets", doc: svc + "[spec.services.healthcheck]\ntype = \"http\"\nport = 70000\ninterval_seconds = 3601\nstart_period_seconds = 3601\nretries = 101\n",
			want: []wantError{
				{path: "spec.services[0].healthcheck.port", code: "healthcheck_port_invalid"},
				{path: "spec.services[0].healthcheck.interval_seconds", code: "budget_exceeded", message: "3,601"},
				{path: "spec.services[0].healthcheck.start_period_seconds", code: "budget_exceeded"},
				{path: "spec.services[0].healthcheck.retries", code: "budget_exceeded"},
			}},
		{name: "low values", doc: svc + "[spec.services.healthcheck]\ntype = \"command\"\ncommand = [\"true\"]\ninterval_seconds = 0\ntimeout_seconds = 0\nstart_period_seconds = -1\nretries = 0\n",
			want: []wantError{
				{path: "spec.services[0].healthcheck.interval_seconds", code: "value_out_of_range"},
				{path: "spec.services[0].healthcheck.timeout_seconds", code: "value_out_of_range"},
				{path: "spec.services[0].healthcheck.start_period_seconds", code: "value_out_of_range"},
				{path: "spec.services[0].healthcheck.retries", code: "value_out_of_range"},
			}},
		{name: "command mistakes", doc: svc + "[spec.services.healthcheck]\ntype = \"command\"\nport = 80\npath = \"/x\"\n",
			want: []wantError{
				{path: "spec.services[0].healthcheck.command", code: "field_required"},
				{path: "spec.services[0].healthcheck.port", code: "healthcheck_field_conflict"},
				{path: "spec.services[0].healthcheck.path", code: "healthcheck_field_conflict"},
			}},
		{name: "type", doc: svc + "[spec.services.healthcheck]\ntype = \"tcp\"\n", want: []wantError{{path: "spec.services[0].healthcheck.type", code: "healthcheck_type_invalid"}}},
	})
}

func TestValidate_Targets(t *testing.T) {
	t.Parallel()
	vol := "[[spec.volumes]]\nname = \"data\"\n"
	runValidateCases(t, []validateCase{
		{name: "valid targets, file inside a volume", doc: vol + svc +
			"[[spec.services.mounts]]\nvolume = \"data\"\ntarget = \"/var/lib/app\"\n" +
			"[[spec.services.files]]\ntarget = \"/var/lib/app/config.yaml\"\ncontent = \"a: 1\"\nmode = \"0640\"\n" +
			"[[spec.services.secrets]]\nname = \"db-password\"\ntarget = \"/run/secrets/db-password\"\n"},
		{name: "target rules", doc: vol + svc +
			"[[spec.services.mounts]]\nvolume = \"data\"\ntarget = \"relative/path\"\n" +
			"[[spec.services.mounts]]\nvolume = \"data\"\ntarget = \"/var//lib/\"\n" +
			"[[spec.services.mounts]]\nvolume = \"data\"\ntarget = \"/run/secrets/x\"\n" +
			"[[spec.services.mounts]]\nvolume = \"data\"\ntarget = \"/run\"\n" +
			"[[spec.services.mounts]]\nvolume = \"data\"\ntarget = \"/run/slipway/probe\"\n" +
			"[[spec.services.mounts]]\nvolume = \"data\"\ntarget = \"/run/piqueld/telemetry\"\n" +
			"[[spec.services.mounts]]\nvolume = \"missing\"\ntarget = \"/\"\n" +
			"[[spec.services.files]]\ntarget = \"/etc/app\"\ncontent = \"x\"\n" +
			"[[spec.services.files]]\ntarget = \"/etc/app/inner.conf\"\ncontent = \"x\"\n" +
			"[[spec.services.files]]\ntarget = \"/etc/app/inner.conf\"\ncontent = \"y\"\n" +
			"[[spec.services.secrets]]\nname = \"s\"\ntarget = \"/etc/secret\"\n" +
			"[[spec.services.secrets]]\nname = \"s\"\ntarget = \"/run/secrets\"\n",
			want: []wantError{
				{path: "spec.services[0].mounts[0].target", code: "target_invalid", message: "absolute"},
				{path: "spec.services[0].mounts[1].target", code: "target_invalid", message: `write "/var/lib"`},
				{path: "spec.services[0].mounts[2].target", code: "target_reserved"},
				{path: "spec.services[0].mounts[3].target", code: "target_reserved"},
				{path: "spec.services[0].mounts[4].target", code: "target_reserved"},
				{path: "spec.services[0].mounts[5].target", code: "target_reserved"},
				{path: "spec.services[0].mounts[6].volume", code: "volume_missing"},
				{path: "spec.services[0].mounts[6].target", code: "target_invalid"},
				{path: "spec.services[0].files[2].target", code: "target_duplicate"},
				{path: "spec.services[0].secrets[0].target", code: "secret_target_invalid"},
				{path: "spec.services[0].secrets[1].target", code: "secret_target_invalid"},
				{path: "spec.services[0].files[0].target", code: "target_nested"},
			}},
		{name: "files", doc: svc +
			"[[spec.services.files]]\ntarget = \"/a\"\n" +
			"[[spec.services.files]]\ntarget = \"/b\"\npath = \"conf/b\"\ncontent = \"x\"\n" +
			"[[spec.services.files]]\ntarget = \"/c\"\npath = \"conf/c\"\n" +
			"[[spec.services.files]]\ntarget = \"/d\"\ncontent = \"x\"\nmode = \"644\"\n",
			want: []wantError{
				{path: "spec.services[0].files[0].content", code: "file_empty"},
				{path: "spec.services[0].files[1]", code: "file_source_conflict"},
				{path: "spec.services[0].files[2].path", code: "file_requires_repository"},
				{path: "spec.services[0].files[3].mode", code: "file_mode_invalid"},
			}},
		{name: "repository files", doc: repoManifest + svc + "[[spec.services.files]]\ntarget = \"/c\"\npath = \"../outside\"\n",
			want: []wantError{{path: "spec.services[0].files[0].path", code: "file_path_invalid"}}},
		{name: "secret mount name reference", doc: "[spec.variables]\nkey = \"stripe-test\"\n" + svc + "[[spec.services.secrets]]\nname = \"${{ vars.key }}\"\ntarget = \"/run/secrets/stripe\"\n"},
	})
}

func TestValidate_Dependencies(t *testing.T) {
	t.Parallel()
	runValidateCases(t, []validateCase{
		{name: "valid chain", doc: svcNamed("db", "") + svcNamed("api", "depends_on = [\"db\"]") + svcNamed("web", "depends_on = [\"api\", \"db\"]")},
		{name: "missing and duplicate", doc: svcNamed("api", "depends_on = [\"db\", \"cache\", \"cache\"]") + svcNamed("cache", ""),
			want: []wantError{{path: "spec.services[0].depends_on[0]", code: "service_dependency_missing"}, {path: "spec.services[0].depends_on[2]", code: "service_dependency_duplicate"}}},
		{name: "cycle and the services behind it", doc: svcNamed("a", "depends_on = [\"b\"]") + svcNamed("b", "depends_on = [\"c\"]") + svcNamed("c", "depends_on = [\"a\"]") +
			svcNamed("d", "depends_on = [\"a\"]") + svcNamed("e", "depends_on = [\"d\"]") + svcNamed("f", "") + svcNamed("g", "depends_on = [\"g\"]"),
			want: []wantError{
				{path: "spec.services[0].depends_on", code: "service_dependency_cycle", message: "a, b, c"},
				{path: "spec.services[1].depends_on", code: "service_dependency_cycle"},
				{path: "spec.services[2].depends_on", code: "service_dependency_cycle"},
				{path: "spec.services[3].depends_on", code: "service_dependency_cycle", message: "through others"},
				{path: "spec.services[4].depends_on", code: "service_dependency_cycle"},
				{path: "spec.services[6].depends_on", code: "service_dependency_cycle", message: "g depends on itself"},
			}},
		{name: "too many", doc: svcNamed("a", "depends_on = [\""+strings.Repeat("a\", \"", 64)+"a\"]"),
			want: []wantError{{path: "spec.services[0].depends_on", code: "service_dependency_count_excessive"}, {path: "spec.services[0].depends_on", code: "service_dependency_cycle"}}},
	})
}

func TestValidate_Jobs(t *testing.T) {
	t.Parallel()
	vol := "[[spec.volumes]]\nname = \"data\"\n"
	pg := svcNamed("postgres", "") + "[[spec.services.mounts]]\nvolume = \"data\"\ntarget = \"/data\"\n"
	api := svcNamed("api", "depends_on = [\"postgres\"]") + "[spec.services.environment]\nDB = \"x\"\n[[spec.services.secrets]]\nname = \"pw\"\ntarget = \"/run/secrets/pw\"\n"
	runValidateCases(t, []validateCase{
		{name: "valid", doc: vol + pg + api + "[[spec.jobs]]\nname = \"pg-init\"\nservice = \"postgres\"\n[[spec.jobs]]\nname = \"migrate\"\nservice = \"api\"\ncommand = [\"migrate\"]\nstop_service = true\ntimeout_seconds = 86400\n[spec.jobs.environment]\nOWNER = \"1\"\n[[spec.jobs.secrets]]\nname = \"owner\"\ntarget = \"/run/secrets/owner\"\n"},
		{name: "mistakes", doc: vol + pg + api + "[[spec.jobs]]\nname = \"migrate\"\nservice = \"api\"\nrun = \"after-rollout\"\ntimeout_seconds = 86401\nvolume_access = \"exclusive\"\n[spec.jobs.environment]\nDB = \"y\"\n[[spec.jobs.secrets]]\nname = \"pw2\"\ntarget = \"/run/secrets/pw\"\n" +
			"[[spec.jobs]]\nname = \"migrate\"\nservice = \"ghost\"\nvolume_access = \"rw\"\ntimeout_seconds = 0\n" +
			"[[spec.jobs]]\nname = \"pg-init\"\nservice = \"postgres\"\n",
			want: []wantError{
				{path: "spec.jobs[0].run", code: "job_run_invalid"},
				{path: "spec.jobs[0].timeout_seconds", code: "budget_exceeded"},
				{path: "spec.jobs[0].environment.DB", code: "job_setting_conflict"},
				{path: "spec.jobs[0].secrets[0].target", code: "job_setting_conflict"},
				{path: "spec.jobs[0].volume_access", code: "job_volume_access_invalid", message: "mounts none"},
				{path: "spec.jobs[0]", code: "job_dependency_order_invalid", message: "declare pg-init first"},
				{path: "spec.jobs[1].name", code: "job_name_duplicate"},
				{path: "spec.jobs[1].service", code: "job_service_missing"},
				{path: "spec.jobs[1].timeout_seconds", code: "value_out_of_range"},
				{path: "spec.jobs[1].volume_access", code: "job_volume_access_invalid"},
			}},
		{name: "exclusive access with a dependency on the volume", doc: vol + svcNamed("reader", "") + "[[spec.services.mounts]]\nvolume = \"data\"\ntarget = \"/data\"\nread_only = true\n" +
			svcNamed("writer", "depends_on = [\"reader\"]") + "[[spec.services.mounts]]\nvolume = \"data\"\ntarget = \"/data\"\n" +
			"[[spec.jobs]]\nname = \"migrate\"\nservice = \"writer\"\nvolume_access = \"exclusive\"\n",
			want: []wantError{{path: "spec.jobs[0].volume_access", code: "job_volume_access_invalid", message: "reader"}}},
		{name: "exclusive access valid", doc: vol + svcNamed("writer", "") + "[[spec.services.mounts]]\nvolume = \"data\"\ntarget = \"/data\"\n[[spec.jobs]]\nname = \"migrate\"\nservice = \"writer\"\nvolume_access = \"exclusive\"\n"},
		{name: "too many jobs", doc: svc + strings.Repeat("[[spec.jobs]]\nname = \"j\"\nservice = \"web\"\n", 17),
			want: append([]wantError{{path: "spec.jobs", code: "budget_exceeded", message: "jobs per application: 17"}}, func() []wantError {
				var w []wantError
				for i := 1; i < 17; i++ {
					w = append(w, wantError{path: "spec.jobs[" + strconv.Itoa(i) + "].name", code: "job_name_duplicate"})
				}
				return w
			}()...)},
	})
}

func TestValidate_Routes(t *testing.T) {
	t.Parallel()
	route := func(body string) string { return "[[spec.routes]]\n" + body + "\n" }
	runValidateCases(t, []validateCase{
		{name: "valid routes", doc: svc + route("name = \"a\"\nhostname = \"App.Example.COM.\"\nservice = \"web\"\nport = 80") +
			route("hostname = \"*.tenants.example.com\"\nservice = \"web\"\nport = 80\nvisibility = \"public\"") +
			route("hostname = \"xn--bcher-kva.example\"\nservice = \"web\"\nport = 65535\nvisibility = \"private\"") +
			route("hostname = \"www.example.com\"\nredirect = { to = \"https://app.example.com:8443/start\", status = 301, preserve_path = false }") +
			route("hostname = \"acme.tenants.example.com\"\nredirect = { to = \"http://app.example.com\" }")},
		{name: "hostname rules", doc: svc + route("hostname = \"https://a.example.com\"\nservice = \"web\"\nport = 80") +
			route("hostname = \"a.example.com/x\"\nservice = \"web\"\nport = 80") +
			route("hostname = \"a.example.com:8080\"\nservice = \"web\"\nport = 80") +
			route("hostname = \"localhost\"\nservice = \"web\"\nport = 80") +
			route("hostname = \"10.0.0.1\"\nservice = \"web\"\nport = 80") +
			route("hostname = \"bücher.example\"\nservice = \"web\"\nport = 80") +
			route("hostname = \"-a.example.com\"\nservice = \"web\"\nport = 80") +
			route("hostname = \"a.*.example.com\"\nservice = \"web\"\nport = 80") +
			route("hostname = \"*.com\"\nservice = \"web\"\nport = 80") +
			route("hostname = \"**.example.com\"\nservice = \"web\"\nport = 80") +
			route("hostname = \"\"\nservice = \"web\"\nport = 80"),
			want: []wantError{
				{path: "spec.routes[0].hostname", code: "hostname_invalid", message: "scheme"},
				{path: "spec.routes[1].hostname", code: "hostname_invalid", message: "path"},
				{path: "spec.routes[2].hostname", code: "hostname_invalid", message: "port"},
				{path: "spec.routes[3].hostname", code: "hostname_invalid"},
				{path: "spec.routes[4].hostname", code: "hostname_invalid", message: "IP"},
				{path: "spec.routes[5].hostname", code: "hostname_invalid", message: "Punycode"},
				{path: "spec.routes[6].hostname", code: "hostname_invalid"},
				{path: "spec.routes[7].hostname", code: "wildcard_hostname_invalid"},
				{path: "spec.routes[8].hostname", code: "wildcard_hostname_invalid"},
				{path: "spec.routes[9].hostname", code: "wildcard_hostname_invalid"},
				{path: "spec.routes[10].hostname", code: "hostname_invalid"},
			}},
		{name: "targets and names", doc: svc + route("name = \"web\"\nhostname = \"a.example.com\"\nservice = \"api\"\nport = 0\nvisibility = \"internal\"") +
			route("name = \"web\"\nhostname = \"A.example.com\"") +
			route("name = \"Bad\"\nhostname = \"b.example.com\"\nservice = \"web\"\nport = 80\nredirect = { to = \"https://c.example.com\" }"),
			want: []wantError{
				{path: "spec.routes[0].visibility", code: "visibility_invalid"},
				{path: "spec.routes[0].service", code: "route_service_missing"},
				{path: "spec.routes[0].port", code: "route_port_invalid"},
				{path: "spec.routes[1].name", code: "route_name_duplicate"},
				{path: "spec.routes[1].hostname", code: "route_hostname_duplicate"},
				{path: "spec.routes[1].service", code: "route_target_invalid"},
				{path: "spec.routes[2].name", code: "name_invalid"},
				{path: "spec.routes[2].redirect", code: "route_target_invalid"},
			}},
		{name: "redirect rules", doc: route("hostname = \"a.example.com\"\nredirect = { to = \"ftp://b.example.com\" }") +
			route("hostname = \"b.example.com\"\nredirect = { to = \"https://c.example.com/?q=1\" }") +
			route("hostname = \"c.example.com\"\nredirect = { to = \"https://d.example.com/#top\" }") +
			route("hostname = \"d.example.com\"\nredirect = { to = \"https://D.example.com\" }") +
			route("hostname = \"e.example.com\"\nredirect = { to = \"https://e.example.com/{path}\" }") +
			route("hostname = \"f.example.com\"\nredirect = { to = \"https://f.example.com/new\" }") +
			route("hostname = \"*.g.example.com\"\nredirect = { to = \"https://x.g.example.com\", status = 200 }") +
			route("hostname = \"h.example.com\"\nredirect = { to = \"https://user@i.example.com\" }"),
			want: []wantError{
				{path: "spec.routes[0].redirect.to", code: "redirect_to_invalid", message: "http or https"},
				{path: "spec.routes[1].redirect.to", code: "redirect_to_invalid", message: "query"},
				{path: "spec.routes[2].redirect.to", code: "redirect_to_invalid", message: "fragment"},
				{path: "spec.routes[3].redirect.to", code: "redirect_to_invalid", message: "lowercase"},
				{path: "spec.routes[4].redirect.to", code: "redirect_to_invalid", message: "{"},
				{path: "spec.routes[5].redirect.to", code: "redirect_loop"},
				{path: "spec.routes[6].redirect.to", code: "redirect_loop"},
				{path: "spec.routes[6].redirect.status", code: "redirect_status_invalid"},
				{path: "spec.routes[7].redirect.to", code: "redirect_to_invalid", message: "credentials"},
			}},
		{name: "hostname reference validated after rendering", doc: "[spec.variables]\ndomain = \"x\"\n" + svc + route("hostname = \"${{ vars.domain }}\"\nservice = \"web\"\nport = 80")},
	})
}

func TestValidate_SecretsAndLinks(t *testing.T) {
	t.Parallel()
	runValidateCases(t, []validateCase{
		{name: "generated secrets valid", doc: "[[spec.secrets]]\nname = \"a\"\ngenerate = { type = \"random\", bytes = 16 }\n[[spec.secrets]]\nname = \"b\"\ngenerate = { type = \"random\", bytes = 512, encoding = \"base64url\" }\n[[spec.secrets]]\nname = \"c\"\ngenerate = { type = \"rsa\", bits = 4096 }\n"},
		{name: "generated secrets mistakes", opts: manifest.ValidateOptions{StoredSecretNames: []string{"stored"}},
			doc: "[[spec.secrets]]\nname = \"stored\"\ngenerate = { type = \"random\", bytes = 15 }\n[[spec.secrets]]\nname = \"stored\"\ngenerate = { type = \"random\", bytes = 32, encoding = \"base32\", bits = 2048 }\n[[spec.secrets]]\nname = \"c\"\ngenerate = { type = \"rsa\", bits = 1024, bytes = 1, encoding = \"hex\" }\n[[spec.secrets]]\nname = \"d\"\ngenerate = { type = \"uuid\" }\n",
			want: []wantError{
				{path: "spec.secrets[0].name", code: "secret_name_conflict"},
				{path: "spec.secrets[0].generate.bytes", code: "secret_generate_invalid"},
				{path: "spec.secrets[1].name", code: "secret_name_duplicate"},
				{path: "spec.secrets[1].name", code: "secret_name_conflict"},
				{path: "spec.secrets[1].generate.encoding", code: "secret_generate_invalid"},
				{path: "spec.secrets[1].generate.bits", code: "secret_generate_invalid"},
				{path: "spec.secrets[2].generate.bits", code: "secret_generate_invalid"},
				{path: "spec.secrets[2].generate.bytes", code: "secret_generate_invalid"},
				{path: "spec.secrets[2].generate.encoding", code: "secret_generate_invalid"},
				{path: "spec.secrets[3].generate.type", code: "secret_generate_invalid"},
			}},
		{name: "links valid", doc: svc + "[[spec.exports]]\nservice = \"web\"\napplications = [\"notes\", \"billing\"]\npreviews = true\n[[spec.imports]]\napplication = \"auth\"\nservice = \"api\"\n[[spec.imports]]\napplication = \"auth\"\nservice = \"admin\"\nenvironment = \"staging\"\n"},
		{name: "links mistakes", doc: svc + "[[spec.exports]]\nservice = \"api\"\napplications = []\n[[spec.exports]]\nservice = \"web\"\napplications = [\"notes\", \"notes\"]\n[[spec.exports]]\nservice = \"web\"\napplications = [\"Billing\"]\n" +
			"[[spec.imports]]\napplication = \"auth\"\nservice = \"api\"\n[[spec.imports]]\napplication = \"auth\"\nservice = \"api\"\nenvironment = \"Prod\"\n",
			want: []wantError{
				{path: "spec.exports[0].service", code: "export_service_missing"},
				{path: "spec.exports[0].applications", code: "export_applications_empty"},
				{path: "spec.exports[1].applications[1]", code: "export_duplicate"},
				{path: "spec.exports[2].service", code: "export_duplicate"},
				{path: "spec.exports[2].applications[0]", code: "name_invalid"},
				{path: "spec.imports[1]", code: "import_duplicate"},
				{path: "spec.imports[1].environment", code: "name_invalid"},
			}},
	})
}

func TestValidate_Environments(t *testing.T) {
	t.Parallel()
	runValidateCases(t, []validateCase{
		{name: "valid promotion chain", doc: repoManifest + "[spec.environments.staging]\nsync = true\n[spec.environments.canary]\npromote_from = \"staging\"\n[spec.environments.production]\npromote_from = \"canary\"\nrollback = \"manual\"\nvisibility = \"private\"\n[spec.environments.qa]\nbranch = \"qa\"\ncommit = \"0123456789abcdef0123456789abcdef01234567\"\n"},
		{name: "repository required", doc: "[spec.environments.staging]\nbranch = \"main\"\ncommit = \"0123456789abcdef0123456789abcdef01234567\"\nsync = true\n[spec.environments.production]\nsync = false\n",
			want: []wantError{
				{path: "spec.environments.staging.branch", code: "manifest_repository_required"},
				{path: "spec.environments.staging.commit", code: "manifest_repository_required"},
				{path: "spec.environments.staging.sync", code: "manifest_repository_required"},
				{path: "spec.environments.staging.sync", code: "environment_sync_pinned"},
			}},
		{name: "source conflicts and promotion", doc: repoManifest + "[spec.environments.a]\npromote_from = \"b\"\nbranch = \"main\"\nsync = true\n[spec.environments.b]\npromote_from = \"a\"\n[spec.environments.c]\npromote_from = \"c\"\n[spec.environments.d]\npromote_from = \"nowhere\"\nrollback = \"sometimes\"\nvisibility = \"secret\"\n[spec.environments.Bad]\n",
			want: []wantError{
				{path: "spec.environments.Bad", code: "name_invalid"},
				{path: "spec.environments.a.promote_from", code: "environment_source_conflict", message: "branch, sync"},
				{path: "spec.environments.a.promote_from", code: "promotion_cycle", message: "a <- b <- a"},
				{path: "spec.environments.b.promote_from", code: "promotion_cycle"},
				{path: "spec.environments.c.promote_from", code: "promotion_cycle", message: "itself"},
				{path: "spec.environments.d.promote_from", code: "promotion_source_invalid"},
				{path: "spec.environments.d.visibility", code: "visibility_invalid"},
				{path: "spec.environments.d.rollback", code: "rollback_invalid"},
			}},
		{name: "previews", doc: "[spec.previews]\nvisibility = \"everyone\"\n", want: []wantError{{path: "spec.previews.visibility", code: "visibility_invalid"}}},
		{name: "manifest source mistakes", doc: "[spec.manifest]\npath = \"/abs/app.yaml\"\nrepository = \"self\"\nsync = { mode = \"push\" }\n",
			want: []wantError{
				{path: "spec.manifest.path", code: "manifest_path_invalid"},
				{path: "spec.manifest.repository", code: "manifest_repository_invalid"},
				{path: "spec.manifest.sync.mode", code: "sync_mode_invalid"},
			}},
		{name: "manifest source more mistakes", doc: "[spec.manifest]\npath = \"app.yaml\"\nsync = { mode = \"poll\", interval_seconds = 59 }\n[spec.manifest.repository]\nurl = \"https://example.com/a.git\"\n",
			want: []wantError{
				{path: "spec.manifest.path", code: "manifest_path_invalid", message: ".toml or .json"},
				{path: "spec.manifest.repository.branch", code: "field_required"},
				{path: "spec.manifest.sync.interval_seconds", code: "sync_interval_invalid"},
			}},
		{name: "bootstrap manifest", doc: "[spec.manifest]\npath = \"infra/app.json\"\nsync = { mode = \"webhook\" }\n[spec.manifest.repository]\nurl = \"ssh://git@example.com/team/infra.git\"\ncommit = \"0123456789abcdef0123456789abcdef01234567\"\n"},
	})
}

func TestValidate_Budgets(t *testing.T) {
	t.Parallel()
	many := func(n int, f func(i int) string) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(f(i))
		}
		return b.String()
	}
	name := func(i int) string { return "n" + strings.Repeat("x", i/26) + string(rune('a'+i%26)) }
	runValidateCases(t, []validateCase{
		{name: "services", doc: many(65, func(i int) string { return svcNamed(name(i), "") }), want: []wantError{{path: "spec.services", code: "budget_exceeded", message: "services per application: 65"}}},
		{name: "volumes", doc: many(65, func(i int) string { return "[[spec.volumes]]\nname = \"" + name(i) + "\"\n" }), want: []wantError{{path: "spec.volumes", code: "budget_exceeded"}}},
		{name: "routes", doc: svc + many(65, func(i int) string {
			return "[[spec.routes]]\nhostname = \"" + name(i) + ".example.com\"\nservice = \"web\"\nport = 80\n"
		}), want: []wantError{{path: "spec.routes", code: "budget_exceeded"}}},
		{name: "generated secrets", doc: many(65, func(i int) string {
			return "[[spec.secrets]]\nname = \"" + name(i) + "\"\ngenerate = { type = \"random\", bytes = 32 }\n"
		}), want: []wantError{{path: "spec.secrets", code: "budget_exceeded"}}},
		{name: "secret mounts", doc: svc + many(65, func(i int) string {
			return "[[spec.services.secrets]]\nname = \"s\"\ntarget = \"/run/secrets/" + name(i) + "\"\n"
		}), want: []wantError{{path: "spec.services[0].secrets", code: "budget_exceeded"}}},
		{name: "variables", doc: "[spec.variables]\n" + many(129, func(i int) string { return name(i) + " = 1\n" }), want: []wantError{{path: "spec.variables", code: "budget_exceeded", message: "129"}}},
		{name: "environment blocks", doc: many(65, func(i int) string { return "[spec.environments." + name(i) + "]\n" }), want: []wantError{{path: "spec.environments", code: "budget_exceeded"}}},
		{name: "environment entries", doc: svc + "[spec.services.environment]\n" + many(257, func(i int) string { return "K" + name(i) + " = \"v\"\n" }), want: []wantError{{path: "spec.services[0].environment", code: "budget_exceeded", message: "257"}}},
		{name: "environment key and value size", doc: svc + "[spec.services.environment]\n" + strings.Repeat("K", 256) + " = \"v\"\nBIG = \"" + strings.Repeat("v", 65537) + "\"\n",
			want: []wantError{{path: "spec.services[0].environment.BIG", code: "budget_exceeded", message: "environment value of BIG"}, {path: "spec.services[0].environment." + strings.Repeat("K", 256), code: "budget_exceeded", message: "256 bytes"}}},
		{name: "command elements", doc: svcNamed("a", "command = ["+strings.Repeat("\"x\", ", 129)+"]\narguments = [\""+strings.Repeat("y", 4097)+"\"]"),
			want: []wantError{{path: "spec.services[0].command", code: "budget_exceeded", message: "command elements: 129"}, {path: "spec.services[0].arguments[0]", code: "budget_exceeded", message: "arguments element size"}}},
		{name: "mounts", doc: "[[spec.volumes]]\nname = \"v\"\n" + svc + many(33, func(i int) string {
			return "[[spec.services.mounts]]\nvolume = \"v\"\ntarget = \"/" + name(i) + "\"\n"
		}), want: []wantError{{path: "spec.services[0].mounts", code: "budget_exceeded"}}},
		{name: "files", doc: svc + many(33, func(i int) string { return "[[spec.services.files]]\ntarget = \"/" + name(i) + "\"\ncontent = \"x\"\n" }), want: []wantError{{path: "spec.services[0].files", code: "budget_exceeded"}}},
		{name: "exports and imports", doc: svc + many(65, func(i int) string { return "[[spec.exports]]\nservice = \"web\"\napplications = [\"a\"]\n" })[:0] +
			"[[spec.exports]]\nservice = \"web\"\napplications = [" + many(65, func(i int) string { return "\"" + name(i) + "\", " }) + "]\n" +
			many(65, func(i int) string { return "[[spec.imports]]\napplication = \"" + name(i) + "\"\nservice = \"api\"\n" }),
			want: []wantError{{path: "spec.exports[0].applications", code: "link_count_excessive"}, {path: "spec.imports", code: "link_count_excessive"}}},
		{name: "cpu", doc: svc + "[spec.services.resources]\ncpu_millis = 1048577\n", want: []wantError{{path: "spec.services[0].resources.cpu_millis", code: "budget_exceeded", message: "1,048,577"}}},
	})
}

// TestValidate_FileBudgets builds the manifests in Go: they are larger than
// TOML sources may be.
func TestValidate_FileBudgets(t *testing.T) {
	t.Parallel()
	base := func() *manifest.Manifest {
		return &manifest.Manifest{APIVersion: manifest.APIVersion, Kind: manifest.Kind, Metadata: manifest.Metadata{Name: "files"}}
	}
	withFiles := func(sizes ...int) *manifest.Manifest {
		m := base()
		for i, n := range sizes {
			m.Spec.Services = append(m.Spec.Services, manifest.Service{
				Name:   "s" + string(rune('a'+i)),
				Source: manifest.Source{Type: "image", Image: "app:1"},
				Files:  []manifest.File{{Target: "/etc/f", Content: strings.Repeat("x", n)}},
			})
		}
		return m
	}
	matchErrors(t, manifest.Validate(withFiles(512000), manifest.ValidateOptions{}), nil)
	matchErrors(t, manifest.Validate(withFiles(512001), manifest.ValidateOptions{}),
		[]wantError{{path: "spec.services[0].files[0].content", code: "budget_exceeded", message: "512,001"}})
	matchErrors(t, manifest.Validate(withFiles(500000, 500000, 500000, 500000, 97153), manifest.ValidateOptions{}),
		[]wantError{{path: "spec.services", code: "budget_exceeded", message: "2,097,153 bytes"}})
	matchErrors(t, manifest.Validate(withFiles(500000, 500000, 500000, 500000, 97152), manifest.ValidateOptions{}), nil)
}

func TestValidate_References(t *testing.T) {
	t.Parallel()
	runValidateCases(t, []validateCase{
		{name: "a reference in a name is reported once, by the variables engine", doc: "[spec.variables]\nx = \"web\"\n" + svcNamed("${{ vars.x }}", ""),
			want: []wantError{{path: "spec.services[0].name", code: "variable_reference_forbidden"}}},
		{name: "undeclared variable", doc: svcNamed("web", "replicas = \"${{ vars.missing }}\""),
			want: []wantError{{path: "spec.services[0].replicas", code: "variable_undeclared"}}},
		// Rendered strings are text: a substituted value may hold "${{"
		// and is never evaluated again, so only the field's own rules apply.
		{name: "rendered strings are checked as text", opts: manifest.ValidateOptions{Rendered: true},
			doc: svcNamed("web", "command = [\"${{ vars.a }}\"]") + "[spec.services.environment]\nA = \"${{ vars.a }}\"\n[[spec.routes]]\nhostname = \"${{ vars.h }}\"\nservice = \"web\"\nport = 80\n",
			want: []wantError{
				{path: "spec.routes[0].hostname", code: "hostname_invalid"},
			}},
		{name: "rendered integer reference", opts: manifest.ValidateOptions{Rendered: true},
			doc: svcNamed("web", "replicas = \"${{ vars.n }}\""),
			want: []wantError{
				{path: "spec.services[0].replicas", code: "reference_unrendered"},
			}},
		{name: "escaped reference is text", opts: manifest.ValidateOptions{Rendered: true}, doc: svc + "[spec.services.environment]\nA = \"$${{ literal }}\"\n"},
	})
}
