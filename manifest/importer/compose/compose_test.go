package compose_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/manifest/importer"
	"github.com/slipwayhq/slipway/manifest/importer/internal/importtest"
)

func TestImport_Golden(t *testing.T) {
	importtest.Golden(t, importer.Compose, "testdata", map[string]bool{
		"forms.yaml":    true,
		"stack.yaml":    true,
		"settings.yaml": true,
		// unsupported.yaml holds what has no Slipway equivalent.
	})
	// Published ports become routes under --domain.
	opts := importtest.Options
	opts.Domain = "shop.example.com"
	importtest.GoldenWith(t, importer.Compose, "testdata/domain", opts, map[string]bool{"routes.yaml": true})
}

// TestImport_NoMarkerLeaks checks that no interpolation marker reaches a
// manifest, wherever the file interpolates.
func TestImport_NoMarkerLeaks(t *testing.T) {
	t.Parallel()
	const src = `name: leaks
services:
  web:
    image: "${REG:-docker.io}/nginx:${TAG:-1}"
    command: ["${CMD:-nginx}", "-g", "daemon off;"]
    entrypoint: "${EP:-/entry}"
    environment:
      A: "${A:-a}"
    healthcheck:
      test: ["CMD", "${PROBE:-/probe}"]
    volumes:
      - "${VOL:-data}:${DIR:-/data}"
    secrets:
      - source: s
        target: "${ST:-s}"
    configs:
      - source: c
        target: "${CT:-/c}"
      - source: d
    ports: ["${PORT:-80}:${CPORT:-8080}"]
    deploy:
      replicas: ${N:-2}
      resources:
        limits:
          cpus: "${CPUS:-0.5}"
          memory: "${MEM:-64M}"
  api:
    build:
      context: "${CTX:-.}"
      args:
        X: "${X:-x}"
secrets:
  s:
    file: "${SF:-s.txt}"
configs:
  c:
    content: "${CC:-c}"
  d:
    file: "${DF:-d.conf}"
volumes:
  data:
`
	opts := importtest.Options
	opts.Domain = "leaks.example.com"
	res, err := importer.Import(importer.Compose, []byte(src), opts)
	if err != nil || res.Manifest == nil {
		t.Fatalf("%+v %v", res, err)
	}
	out, _ := importer.Encode(res.Manifest, "toml")
	for _, text := range []string{string(out), importtest.Render(t, res)} {
		if strings.Contains(text, markerPrefix) {
			t.Errorf("a marker leaked:\n%s", text)
		}
	}
}

func svc(m *manifest.Manifest, name string) *manifest.Service {
	for i := range m.Spec.Services {
		if m.Spec.Services[i].Name == name {
			return &m.Spec.Services[i]
		}
	}
	return nil
}

type mapping struct {
	name  string
	src   string
	opts  importer.Options
	diags []string // prefixes of diagnostic lines
	check func(t *testing.T, m *manifest.Manifest)
}

func runMappings(t *testing.T, tests []mapping) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := tt.opts
			if opts.Name == "" {
				opts.Name = "app"
			}
			res, err := importer.Import(importer.Compose, []byte(tt.src), opts)
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

var repo = importer.Options{Repository: "https://git.example.com/acme/shop.git"}

// TestImport_Mappings pins each Compose form issue #24 lists.
func TestImport_Mappings(t *testing.T) {
	t.Parallel()
	const web = "services:\n  web:\n    image: nginx:1.27\n"
	runMappings(t, []mapping{
		{name: "interpolation", src: "services:\n  web:\n    image: \"${REGISTRY:-docker.io}/nginx:${TAG:-1.27}\"\n    environment:\n      LEVEL: ${LEVEL:-info}\n      TOKEN: ${TOKEN}\n      LITERAL: $${NOT_A_VAR}\n      MIXED: \"a-${LEVEL:-info}-b\"\n",
			diags: []string{"warning: services.web.environment.TOKEN: compose variable TOKEN has no default", "warning: services.web.environment.TOKEN: Slipway variables are plain configuration"},
			check: func(t *testing.T, m *manifest.Manifest) {
				s := m.Spec.Services[0]
				if s.Source.Image != "${{ vars.REGISTRY }}/nginx:${{ vars.TAG }}" {
					t.Errorf("image = %q", s.Source.Image)
				}
				env := s.Environment
				if env["LEVEL"] != "${{ vars.LEVEL }}" || env["TOKEN"] != "${{ vars.TOKEN }}" || env["LITERAL"] != "${NOT_A_VAR}" || env["MIXED"] != "a-${{ vars.LEVEL }}-b" {
					t.Errorf("environment = %v", env)
				}
				v := m.Spec.Variables
				if v["TAG"].String() != "1.27" || v["LEVEL"].String() != "info" || v["TOKEN"].String() != "" {
					t.Errorf("variables = %v", v)
				}
			}},
		{name: "variable where a number goes", src: web + "    deploy:\n      replicas: ${REPLICAS:-3}\n",
			diags: []string{"warning: services.web.deploy.replicas: ${REPLICAS:-3} stands where the value must be known when the file is read (a number, size, port or declared name), so its value when REPLICAS is unset (\"3\") was written"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if r := m.Spec.Services[0].Replicas; r == nil || r.N != 3 {
					t.Errorf("replicas = %+v", r)
				}
			}},
		{name: "conditional and required interpolation", src: web + "    environment:\n      DEBUG_FLAGS: ${DEBUG:+--verbose}\n      HOST: ${HOST:?set HOST}\n",
			diags: []string{"warning: services.web.environment.DEBUG_FLAGS: ${DEBUG:+--verbose} chooses a value by whether compose variable DEBUG is set", "warning: services.web.environment.HOST: compose variable HOST has no default"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if env := m.Spec.Services[0].Environment; env["DEBUG_FLAGS"] != "" || env["HOST"] != "${{ vars.HOST }}" {
					t.Errorf("environment = %v", env)
				}
			}},
		{name: "one variable, two defaults", src: web + "    environment:\n      A: ${LEVEL:-info}\n      B: ${LEVEL:-debug}\n",
			diags: []string{"error: services.web.environment.B: compose variable LEVEL has two different inline defaults"}},
		{name: "interpolated config content", src: web + "    configs: [motd, banner]\nconfigs:\n  motd:\n    content: \"Welcome to ${REGION:-the shop}\"\n  banner:\n    content: \"${BANNER}\"\n",
			diags: []string{"warning: configs.motd.content: Slipway needs a file's content as it is (it is not rendered with variables), so ${REGION:-the shop} was written as its default \"the shop\"",
				"error: configs.banner.content: ${BANNER} has no default, and Slipway needs a file's content as it is"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if f := m.Spec.Services[0].Files; len(f) != 1 || f[0].Content != "Welcome to the shop" {
					t.Errorf("files = %+v", f)
				}
			}},
		{name: "environment list", src: web + "    environment:\n      - A=1\n      - B=two words\n      - FROM_HOST\n",
			diags: []string{"warning: services.web.environment.FROM_HOST: compose variable FROM_HOST has no default"},
			check: func(t *testing.T, m *manifest.Manifest) {
				env := m.Spec.Services[0].Environment
				if env["A"] != "1" || env["B"] != "two words" || env["FROM_HOST"] != "${{ vars.FROM_HOST }}" {
					t.Errorf("environment = %v", env)
				}
			}},
		{name: "env_file", src: web + "    env_file: [.env, prod.env]\n", diags: []string{"warning: services.web.env_file: the env file .env, prod.env is not read"}},
		{name: "build", opts: repo, src: "services:\n  api:\n    build:\n      context: ./api\n      dockerfile: deploy/Dockerfile\n      target: runtime\n      args:\n        VERSION: \"1.2\"\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				src := m.Spec.Services[0].Source
				if src.Type != manifest.SourceGit || !src.Repository.Self || src.Build.Context != "api" || src.Build.Dockerfile != "api/deploy/Dockerfile" || src.Build.Target != "runtime" || src.Build.Args["VERSION"] != "1.2" {
					t.Errorf("source = %+v build %+v", src, src.Build)
				}
				if m.Spec.Manifest == nil || m.Spec.Manifest.Repository.URL != repo.Repository {
					t.Errorf("spec.manifest = %+v", m.Spec.Manifest)
				}
			}},
		{name: "build argument from the environment", opts: repo, src: "services:\n  api:\n    build:\n      context: .\n      args: [REF, \"EMPTY=\"]\n",
			diags: []string{"warning: services.api.build.args.REF: the build argument REF takes its value from the environment docker compose runs in"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if a := m.Spec.Services[0].Source.Build.Args; len(a) != 1 || a["EMPTY"] != "" {
					t.Errorf("args = %v", a)
				}
			}},
		{name: "build without a repository", src: "services:\n  api:\n    build: .\n", diags: []string{"error: services.api.build: this builds from the project's own repository"}},
		{name: "build from a Git URL", src: "services:\n  api:\n    build: https://github.com/acme/api.git#v2:server\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				src := m.Spec.Services[0].Source
				if src.Repository.URL != "https://github.com/acme/api.git" || src.Repository.Branch != "v2" || src.Build.Context != "server" {
					t.Errorf("source = %+v %+v", src.Repository, src.Build)
				}
			}},
		{name: "depends_on short", src: web + "    depends_on: [db]\n  db:\n    image: postgres:17\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				if d := svc(m, "web").DependsOn; !slices.Equal(d, []string{"db"}) {
					t.Errorf("depends_on = %v", d)
				}
			}},
		{name: "depends_on healthy", src: web + "    depends_on:\n      db:\n        condition: service_healthy\n  db:\n    image: postgres:17\n    healthcheck:\n      test: [CMD, pg_isready]\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				if d := svc(m, "web").DependsOn; !slices.Equal(d, []string{"db"}) {
					t.Errorf("depends_on = %v", d)
				}
				if h := svc(m, "db").Healthcheck; h == nil || h.Type != manifest.HealthcheckCommand || !slices.Equal(h.Command, []string{"pg_isready"}) {
					t.Errorf("healthcheck = %+v", h)
				}
			}},
		{name: "depends_on healthy without a check", src: web + "    depends_on:\n      db:\n        condition: service_healthy\n  db:\n    image: postgres:17\n",
			diags: []string{"warning: services.web.depends_on.db: db declares no health check here"}},
		{name: "completed successfully is a job", src: web + "    depends_on:\n      migrate:\n        condition: service_completed_successfully\n  migrate:\n    image: acme/app:1\n    command: [migrate, up]\n",
			diags: []string{"warning: services.migrate: migrate runs to completion, so it becomes a job"},
			check: func(t *testing.T, m *manifest.Manifest) {
				// The job runs the service's arguments after the image's
				// ENTRYPOINT, as Compose's command does.
				if len(svc(m, "web").DependsOn) != 0 || len(m.Spec.Jobs) != 1 || m.Spec.Jobs[0].Command != nil || !slices.Equal(svc(m, "migrate").Arguments, []string{"migrate", "up"}) || svc(m, "migrate").Replicas.N != 0 {
					t.Errorf("jobs %+v web %+v", m.Spec.Jobs, svc(m, "web"))
				}
			}},
		{name: "healthcheck http probe", src: web + "    healthcheck:\n      test: curl -fsS http://localhost:8080/health || exit 1\n      interval: 15s\n      timeout: 20s\n      start_period: 1m\n      retries: 4\n",
			diags: []string{"warning: services.web.healthcheck.timeout: Slipway's check timeout cannot exceed its interval"},
			check: func(t *testing.T, m *manifest.Manifest) {
				h := m.Spec.Services[0].Healthcheck
				if h.Type != manifest.HealthcheckHTTP || h.Port.N != 8080 || h.Path != "/health" || h.IntervalSeconds.N != 15 || h.TimeoutSeconds.N != 15 || h.StartPeriodSeconds.N != 60 || h.Retries.N != 4 {
					t.Errorf("healthcheck = %+v", h)
				}
			}},
		{name: "healthcheck wget probe", src: web + "    healthcheck:\n      test: [CMD-SHELL, \"wget -qO- http://127.0.0.1/ || exit 1\"]\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				if h := m.Spec.Services[0].Healthcheck; h.Port.N != 80 || h.Path != "/" {
					t.Errorf("healthcheck = %+v", h)
				}
			}},
		{name: "healthcheck quoted IPv6 probe", src: web + "    healthcheck:\n      test: [CMD-SHELL, \"curl -fsS 'http://[::1]:9000/ping' || exit 1\"]\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				if h := m.Spec.Services[0].Healthcheck; h == nil || h.Port.N != 9000 || h.Path != "/ping" {
					t.Errorf("healthcheck = %+v", h)
				}
			}},
		{name: "healthcheck shell", src: web + "    healthcheck:\n      test: pg_isready -U $$POSTGRES_USER\n", diags: []string{"error: services.web.healthcheck.test: a shell health check (CMD-SHELL) has no Slipway equivalent"}},
		{name: "healthcheck disabled", src: web + "    healthcheck:\n      disable: true\n", diags: []string{"warning: services.web.healthcheck: disabling the image's health check is not available"}},
		{name: "deploy", src: web + "    deploy:\n      replicas: 3\n      resources:\n        limits:\n          cpus: \"0.5\"\n          memory: 512M\n        reservations:\n          memory: 128M\n      update_config:\n        order: start-first\n        monitor: 20s\n        parallelism: 2\n",
			diags: []string{"warning: services.web.deploy.resources.reservations: Slipway sets limits only", "warning: services.web.deploy.update_config.parallelism:"},
			check: func(t *testing.T, m *manifest.Manifest) {
				s := m.Spec.Services[0]
				if s.Replicas.N != 3 || s.Resources.CPUMillis.N != 500 || s.Resources.MemoryBytes.N != 512<<20 || s.Rollout.Order != manifest.RolloutStartFirst || s.Rollout.MonitorSeconds.N != 20 {
					t.Errorf("service = %+v %+v %+v", s.Replicas, s.Resources, s.Rollout)
				}
			}},
		{name: "legacy scale and limits", src: web + "    scale: 2\n    cpus: 1.5\n    mem_limit: 1g\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				s := m.Spec.Services[0]
				if s.Replicas.N != 2 || s.Resources.CPUMillis.N != 1500 || s.Resources.MemoryBytes.N != 1<<30 {
					t.Errorf("service = %+v %+v", s.Replicas, s.Resources)
				}
			}},
		{name: "global mode", src: web + "    deploy:\n      mode: global\n", diags: []string{"error: services.web.deploy.mode: the global mode has no Slipway equivalent"}},
		{name: "volumes", src: web + "    volumes:\n      - data:/var/lib/data\n      - type: volume\n        source: cache\n        target: /cache\n        read_only: true\n      - /scratch\nvolumes:\n  data:\n  cache:\n",
			diags: []string{"warning: services.web.volumes[2]: the anonymous volume at /scratch becomes the named volume web-1"},
			check: func(t *testing.T, m *manifest.Manifest) {
				mt := m.Spec.Services[0].Mounts
				if len(mt) != 3 || mt[0].Volume != "data" || mt[1].Volume != "cache" || !mt[1].ReadOnly || mt[2].Volume != "web-1" || len(m.Spec.Volumes) != 3 {
					t.Errorf("mounts = %+v volumes %+v", mt, m.Spec.Volumes)
				}
			}},
		{name: "bind mount", src: web + "    volumes:\n      - ./html:/usr/share/nginx/html:ro\n", diags: []string{"error: services.web.volumes[0]: the bind mount of the host path ./html has no Slipway equivalent"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if len(m.Spec.Services[0].Mounts) != 0 {
					t.Errorf("mounts = %+v", m.Spec.Services[0].Mounts)
				}
			}},
		{name: "tmpfs", src: web + "    tmpfs: /run\n", diags: []string{"warning: services.web.tmpfs:"}},
		{name: "secrets", src: web + "    secrets:\n      - db_password\n      - source: api_key\n        target: api\n      - source: cert\n        target: /run/secrets/tls/cert.pem\nsecrets:\n  db_password:\n    file: ./db_password.txt\n  api_key:\n    environment: API_KEY\n  cert:\n    external: true\n",
			diags: []string{"warning: secrets.db_password.file: secret db-password is a stored Slipway secret", "warning: secrets.api_key.environment:", "warning: secrets.cert: secret cert is a stored Slipway secret: set its value with slipway app secret"},
			check: func(t *testing.T, m *manifest.Manifest) {
				sec := m.Spec.Services[0].Secrets
				if len(sec) != 3 || sec[0].Name != "db-password" || sec[0].Target != "/run/secrets/db_password" || sec[1].Target != "/run/secrets/api" || sec[2].Target != "/run/secrets/tls/cert.pem" {
					t.Errorf("secrets = %+v", sec)
				}
			}},
		{name: "secret outside /run/secrets", src: web + "    secrets:\n      - source: k\n        target: /etc/k\nsecrets:\n  k:\n    file: k.txt\n", diags: []string{"error: services.web.secrets[0]: the secret target /etc/k is outside /run/secrets"}},
		{name: "configs", opts: repo, src: web + "    configs:\n      - source: nginx\n        target: /etc/nginx/nginx.conf\n        mode: 0440\n      - motd\nconfigs:\n  nginx:\n    file: ./conf/nginx.conf\n  motd:\n    content: hello\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				f := m.Spec.Services[0].Files
				if len(f) != 2 || f[0].Path != "conf/nginx.conf" || f[0].Target != "/etc/nginx/nginx.conf" || f[0].Mode != "0440" || f[1].Content != "hello" || f[1].Target != "/motd" {
					t.Errorf("files = %+v", f)
				}
			}},
		{name: "config file without a repository", src: web + "    configs: [c]\nconfigs:\n  c:\n    file: c.conf\n", diags: []string{"error: configs.c.file: the config file c.conf is read from the project's repository"}},
		{name: "ports reported", src: web + "    ports: [\"8080:80\"]\n", diags: []string{"warning: services.web.ports: Slipway does not publish host ports: container port(s) 80"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if len(m.Spec.Routes) != 0 {
					t.Errorf("routes = %+v", m.Spec.Routes)
				}
			}},
		{name: "ports routed", opts: importer.Options{Domain: "shop.example.com"}, src: web + "    ports: [\"8080:80\"]\n  db:\n    image: postgres:17\n    ports: [\"5432:5432\"]\n",
			diags: []string{"warning: services.db.ports: port(s) 5432 are not routed"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if r := m.Spec.Routes; len(r) != 1 || r[0].Hostname != "shop.example.com" || r[0].Service != "web" || r[0].Port != 80 {
					t.Errorf("routes = %+v", r)
				}
			}},
		{name: "several services routed", opts: importer.Options{Domain: "shop.example.com"}, src: web + "    ports: [\"80\"]\n  api:\n    image: acme/api:1\n    ports:\n      - target: 3000\n        published: \"3000\"\n      - 9229:9229\n",
			diags: []string{"warning: services.api.ports: a route serves one port: port 3000 is routed"},
			check: func(t *testing.T, m *manifest.Manifest) {
				r := m.Spec.Routes
				if len(r) != 2 || r[0].Hostname != "api.shop.example.com" || r[0].Port != 3000 || r[1].Hostname != "web.shop.example.com" {
					t.Errorf("routes = %+v", r)
				}
			}},
		{name: "profiles", src: web + "  debug:\n    image: busybox\n    profiles: [debug]\n", diags: []string{"warning: services.debug: the service runs only with the Compose profile(s) debug"},
			check: func(t *testing.T, m *manifest.Manifest) {
				if len(m.Spec.Services) != 1 {
					t.Errorf("services = %+v", m.Spec.Services)
				}
			}},
		{name: "obsolete version", src: "version: \"3.8\"\n" + web, diags: []string{"warning: version: obsolete key"}},
		{name: "command and entrypoint", src: web + "    entrypoint: [/docker-entrypoint.sh]\n    command: nginx -g \"daemon off;\"\n",
			check: func(t *testing.T, m *manifest.Manifest) {
				s := m.Spec.Services[0]
				if !slices.Equal(s.Command, []string{"/docker-entrypoint.sh"}) || !slices.Equal(s.Arguments, []string{"nginx", "-g", "daemon off;"}) {
					t.Errorf("command %q arguments %q", s.Command, s.Arguments)
				}
			}},
		{name: "no equivalent", src: web + "    network_mode: host\n    privileged: true\n    working_dir: /app\n    cap_add: [NET_ADMIN]\n",
			diags: []string{"error: services.web.network_mode:", "error: services.web.privileged:", "error: services.web.working_dir:", "error: services.web.cap_add:"}},
		{name: "empty and false ask for nothing", src: web + "    privileged: false\n    cap_add: []\n    extra_hosts: []\n    read_only: false\n    labels: {}\n",
			check: func(t *testing.T, m *manifest.Manifest) {}},
		{name: "not valid", src: "services:\n  web:\n    image: nginx\n    bogus: 1\n", diags: []string{"error: (file): not a valid Compose file:"}},
	})
}

func TestImport_NameFromFileOrDirectory(t *testing.T) {
	t.Parallel()
	res, err := importer.Import(importer.Compose, []byte("name: shop-prod\nservices:\n  web:\n    image: nginx\n"), importer.Options{})
	if err != nil || res.Manifest == nil || res.Manifest.Metadata.Name != "shop-prod" {
		t.Fatalf("%+v %v", res, err)
	}
	res, _ = importer.Import(importer.Compose, []byte("name: shop_prod\nservices:\n  web:\n    image: nginx\n"), importer.Options{})
	if res.Manifest == nil || res.Manifest.Metadata.Name != "shop-prod" || !strings.Contains(res.Diagnostics[0].Message, `normalized to "shop-prod"`) {
		t.Fatalf("%+v", res)
	}
	res, _ = importer.Import(importer.Compose, []byte("services:\n  web:\n    image: nginx\n"), importer.Options{Filename: "deploy/My_Shop/compose.yaml"})
	if res.Manifest == nil || res.Manifest.Metadata.Name != "my-shop" || !strings.Contains(res.Diagnostics[0].Message, "after its directory") {
		t.Fatalf("%+v", res)
	}
}

// markerPrefix starts the loader's interpolation markers.
const markerPrefix = "SLWVAR_"

func FuzzImport(f *testing.F) {
	importtest.Seeds(f, "testdata")
	f.Fuzz(func(t *testing.T, data []byte) {
		importtest.Fuzz(t, importer.Compose, data)
		// No interpolation marker reaches a manifest or a message.
		res, _ := importer.Import(importer.Compose, data, importtest.Options)
		text := importtest.Render(t, res)
		if strings.Contains(text, markerPrefix) && !strings.Contains(string(data), markerPrefix) {
			t.Fatalf("a marker leaked:\n%s", text)
		}
	})
}
