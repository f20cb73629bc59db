package config

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/configuration.md")

// noEnv is an empty environment, so tests never see the process's.
func noEnv(string) (string, bool) { return "", false }

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "slipway.toml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// sample sets every key to a valid value other than its default.
func sample() Config {
	return Config{
		DatabaseURL:    "postgres://slipway@db:5432/slipway",
		Listen:         "0.0.0.0:9090",
		PublicURL:      "https://slipway.example.com",
		SecretKeyFile:  "/etc/slipway/secret.key",
		SecretKey:      "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
		DataDir:        "/srv/slipway",
		LogLevel:       "debug",
		InstallationID: "staging-eu",
		SecureCookies:  true,
		Reconciliation: Reconciliation{
			ConvergenceTimeoutSeconds: 600,
			PrepareTimeoutSeconds:     1200,
			ScanIntervalSeconds:       15,
		},
		Previews: Previews{MaxPerApplication: 3, MaxTotal: 20, DefaultCPUMillis: 250, DefaultMemoryBytes: 256 << 20, MaxReplicas: 1},
		Ingress: Ingress{
			Enabled: false, HTTPPort: 8080, HTTPSPort: 8443, PrivateAddr: "100.64.0.1:443",
			Image:    "registry.example.com/slipway:1.2.0",
			FeedAddr: "10.0.0.1:8081", GatewayToken: "gw-s3cret",
			MetricsAddr: "127.0.0.1:9100", MetricsTokenFile: "/etc/slipway/gateway-metrics-token",
			MaxBodyBytes: 1 << 30, BodyIdleTimeoutSeconds: 30, SendTimeoutSeconds: 45, TrustedProxies: []string{"10.0.0.0/8", "192.168.1.5"},
			ACME: ACME{
				Directory: "https://acme.example.com/directory", Email: "ops@example.com",
				CARoot: "/etc/slipway/acme-root.pem", CertDir: "/etc/slipway/certs",
			},
		},
		GitHub: GitHub{
			APIURL: "https://ghe.example.com/api/v3", AppID: 12345, AppSlug: "slipway-example",
			PrivateKeyFile: "/etc/slipway/github.pem", WebhookSecretFile: "/etc/slipway/webhook-secret",
		},
		Metrics:    Metrics{Token: "s3cret", WorkerListen: "127.0.0.1:9102"},
		Telemetry:  Telemetry{OTLPEndpoint: "http://collector:4318", MetricsIntervalSeconds: 10},
		Worker:     Worker{DeployConcurrency: 8, UsageSampleSeconds: 5},
		Images:     Images{Pull: false},
		Git:        Git{AllowFileURLs: true},
		Security:   Security{AllowedOutboundNetworks: []string{"10.20.0.0/16", "fd12:3456::/48"}},
		Containers: Containers{PidsLimit: 256, DefaultMemoryBytes: 256 << 20},
		Quotas: Quotas{Applications: 5, Environments: 10, Previews: 3, Replicas: 12, CPUMillis: 4000, MemoryBytes: 8 << 30,
			Volumes: 4, Secrets: 20, ConcurrentBuilds: 1, ConcurrentDeployments: 2},
		Registry: Registry{Mode: RegistryExternal, URL: "registry.example.com/slipway", User: "ci", PasswordFile: "/etc/slipway/registry-password",
			Port: 5001, Image: "registry.example.com/slipway:1.2.0", APIURL: "http://slipway-registry:5000"},
	}
}

func TestSample_DiffersFromDefaultInEveryKey(t *testing.T) {
	t.Parallel()
	s, d := sample(), Default()
	if err := s.Validate(); err != nil {
		t.Fatalf("sample is invalid: %v", err)
	}
	for _, f := range fields() {
		if f.Key == "metrics.token_file" || f.Key == "ingress.gateway_token_file" {
			continue // exclusive with metrics.token, covered by TestLoad_EveryKeyFromEnv
		}
		if reflect.DeepEqual(f.value(&s).Interface(), f.value(&d).Interface()) {
			t.Errorf("%s: sample equals the default, so the env test cannot see it change", f.Key)
		}
	}
}

func TestLoad_EveryKeyFromEnv(t *testing.T) {
	t.Parallel()
	want := sample()
	for _, f := range fields() {
		t.Run(f.Key, func(t *testing.T) {
			t.Parallel()
			val := strings.Trim(f.tomlValue(&want), `"`)
			if f.kind == reflect.Slice {
				// Comma-separated in the environment.
				val = strings.Join(f.value(&want).Interface().([]string), ",")
			}
			if f.Key == "metrics.token_file" {
				val = "/run/secrets/metrics-token"
			}
			if f.Key == "ingress.gateway_token_file" {
				val = "/run/secrets/gateway-token"
			}
			got, err := Options{Path: filepath.Join(t.TempDir(), "none.toml"), LookupEnv: envOf(map[string]string{f.Env: val})}.Load()
			if err != nil {
				// A key valid only with others (github.app_id) must still
				// fail on validation, never on the variable.
				var errs Errors
				if !errors.As(err, &errs) || errs[0].Code != CodeRequired {
					t.Fatalf("%s=%s: %v", f.Env, val, err)
				}
				return
			}
			if s, w := f.tomlValue(&got), f.tomlValue(&want); s != w && strings.Trim(s, `"`) != val {
				t.Errorf("%s=%s: %s is %s", f.Env, val, f.Key, s)
			}
		})
	}
}

func TestLoad_EstablishedEnvNames(t *testing.T) {
	t.Parallel()
	// Names other parts of Slipway and existing deployments already use.
	tests := []struct {
		env, key, value string
	}{
		{"DATABASE_URL", "database_url", "postgres://a@b/c"},
		{"SLIPWAY_SECRET_KEY_FILE", "secret_key_file", "/k"},
		{"SLIPWAY_SECRET_KEY", "secret_key", "abc"},
		{"SLIPWAY_PUBLIC_URL", "public_url", "https://p.example.com"},
		{"SLIPWAY_GATEWAY_HTTP_PORT", "ingress.http_port", "8081"},
		{"SLIPWAY_GATEWAY_HTTPS_PORT", "ingress.https_port", "8444"},
		{"SLIPWAY_GATEWAY_PRIVATE_ADDR", "ingress.private_addr", "10.0.0.1:443"},
		{"SLIPWAY_GATEWAY_IMAGE", "ingress.image", "slipway:dev"},
		{"SLIPWAY_ACME_DIRECTORY", "ingress.acme.directory", "https://localhost:14000/dir"},
		{"SLIPWAY_ACME_EMAIL", "ingress.acme.email", "a@example.com"},
		{"SLIPWAY_ACME_CA_ROOT", "ingress.acme.ca_root", "/root.pem"},
		{"SLIPWAY_GATEWAY_CERT_DIR", "ingress.acme.cert_dir", "/certs"},
		{"SLIPWAY_GITHUB_API_URL", "github.api_url", "http://127.0.0.1:9999"},
		{"SLIPWAY_GITHUB_APP_SLUG", "github.app_slug", "my-app"},
		{"SLIPWAY_GITHUB_PRIVATE_KEY_FILE", "github.private_key_file", "/gh.pem"},
		{"SLIPWAY_GITHUB_WEBHOOK_SECRET_FILE", "github.webhook_secret_file", "/wh"},
		{"SLIPWAY_METRICS_TOKEN", "metrics.token", "tok"},
		{"SLIPWAY_LISTEN", "listen", "127.0.0.1:0"},
		{"SLIPWAY_LOG_LEVEL", "log_level", "warn"},
		{"SLIPWAY_SECURE_COOKIES", "secure_cookies", "true"},
		{"SLIPWAY_INSTALLATION_ID", "installation_id", "ci-7"},
		{"SLIPWAY_IMAGES_PULL", "images.pull", "false"},
		{"SLIPWAY_RECONCILIATION_CONVERGENCE_TIMEOUT_SECONDS", "reconciliation.convergence_timeout_seconds", "30"},
	}
	tested := map[string]bool{}
	for _, tt := range tests {
		tested[tt.env] = true
	}
	for _, v := range EnvVars() {
		if v.Alias && !tested[v.Name] {
			t.Errorf("alias %s of %s is not in this table", v.Name, v.Key)
		}
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			t.Parallel()
			c, err := Options{Path: "/nonexistent/slipway.toml", LookupEnv: envOf(map[string]string{tt.env: tt.value})}.Load()
			if err != nil {
				t.Fatal(err)
			}
			f, ok := fieldByKey(tt.key)
			if !ok {
				t.Fatalf("no key %s", tt.key)
			}
			if got := strings.Trim(f.tomlValue(&c), `"`); got != tt.value {
				t.Errorf("%s=%s set %s to %s", tt.env, tt.value, tt.key, got)
			}
		})
	}
	// app_id is only valid with its files.
	c, err := Options{Path: "/nonexistent", LookupEnv: envOf(map[string]string{
		"SLIPWAY_GITHUB_APP_ID": "42", "SLIPWAY_GITHUB_PRIVATE_KEY_FILE": "/k", "SLIPWAY_GITHUB_WEBHOOK_SECRET_FILE": "/w",
	})}.Load()
	if err != nil || c.GitHub.AppID != 42 {
		t.Errorf("SLIPWAY_GITHUB_APP_ID=42: app_id %d, %v", c.GitHub.AppID, err)
	}
}

func TestLoad_EnvErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		env       map[string]string
		wantKey   string
		wantCode  string
		wantInMsg string
	}{
		{"not an integer", map[string]string{"SLIPWAY_RECONCILIATION_SCAN_INTERVAL_SECONDS": "1m"}, "reconciliation.scan_interval_seconds", CodeTypeInvalid, "env SLIPWAY_RECONCILIATION_SCAN_INTERVAL_SECONDS"},
		{"not a boolean", map[string]string{"SLIPWAY_INGRESS_ENABLED": "yes"}, "ingress.enabled", CodeTypeInvalid, "must be a boolean"},
		{"alias not an integer", map[string]string{"SLIPWAY_GATEWAY_HTTP_PORT": "http"}, "ingress.http_port", CodeTypeInvalid, "env SLIPWAY_GATEWAY_HTTP_PORT"},
		{"alias and canonical differ", map[string]string{"DATABASE_URL": "postgres://a/b", "SLIPWAY_DATABASE_URL": "postgres://c/d"}, "database_url", CodeEnvConflict, "SLIPWAY_DATABASE_URL and DATABASE_URL"},
		{"out of range names its variable", map[string]string{"SLIPWAY_INGRESS_HTTP_PORT": "70000"}, "ingress.http_port", CodeOutOfRange, "env SLIPWAY_INGRESS_HTTP_PORT: ingress.http_port: must be between 1 and 65535, got 70000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Options{Path: "/nonexistent", LookupEnv: envOf(tt.env)}.Load()
			e := onlyError(t, err)
			if e.Key != tt.wantKey || e.Code != tt.wantCode || !strings.Contains(e.Error(), tt.wantInMsg) {
				t.Errorf("got %v; want key %s, code %s, message containing %q", e, tt.wantKey, tt.wantCode, tt.wantInMsg)
			}
		})
	}
}

func TestLoad_EnvSameValueTwiceAndEmpty(t *testing.T) {
	t.Parallel()
	c, err := Options{Path: "/nonexistent", LookupEnv: envOf(map[string]string{
		"DATABASE_URL": "postgres://a/b", "SLIPWAY_DATABASE_URL": "postgres://a/b",
		"SLIPWAY_LISTEN": "", // empty is unset
	})}.Load()
	if err != nil {
		t.Fatal(err)
	}
	if c.DatabaseURL != "postgres://a/b" || c.Listen != Default().Listen {
		t.Errorf("database_url %q, listen %q", c.DatabaseURL, c.Listen)
	}
}

func TestLoad_Precedence(t *testing.T) {
	t.Parallel()
	file := writeFile(t, "listen = \"127.0.0.1:1001\"\n[worker]\ndeploy_concurrency = 2\n")
	env := map[string]string{"SLIPWAY_LISTEN": "127.0.0.1:1002"}
	flagListen := Override{Key: "listen", Value: "127.0.0.1:1003", Source: "flag --listen"}
	tests := []struct {
		name      string
		path      string
		env       map[string]string
		overrides []Override
		want      string
	}{
		{"default", "/nonexistent", nil, nil, "127.0.0.1:8080"},
		{"file over default", file, nil, nil, "127.0.0.1:1001"},
		{"env over file", file, env, nil, "127.0.0.1:1002"},
		{"flag over env", file, env, []Override{flagListen}, "127.0.0.1:1003"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Options{Path: tt.path, LookupEnv: envOf(tt.env), Overrides: tt.overrides}.Load()
			if err != nil {
				t.Fatal(err)
			}
			if c.Listen != tt.want {
				t.Errorf("listen = %s, want %s", c.Listen, tt.want)
			}
			// Keys nobody overrode keep the file's value, or the default.
			if wantConc := map[bool]int{true: 2, false: 4}[tt.path == file]; c.Worker.DeployConcurrency != wantConc {
				t.Errorf("worker.deploy_concurrency = %d, want %d", c.Worker.DeployConcurrency, wantConc)
			}
		})
	}
}

func TestLoad_PartialTableKeepsOtherDefaults(t *testing.T) {
	t.Parallel()
	c, err := Options{Path: writeFile(t, "[previews]\nmax_total = 50\n"), LookupEnv: noEnv}.Load()
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Previews.MaxTotal = 50
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got %+v\nwant %+v", c, want)
	}
}

func TestLoad_Overrides(t *testing.T) {
	t.Parallel()
	_, err := Options{Path: "/nonexistent", LookupEnv: noEnv, Overrides: []Override{
		{Key: "nope", Value: "1", Source: "flag --nope"},
		{Key: "worker.deploy_concurrency", Value: "many", Source: "flag --concurrency"},
	}}.Load()
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 2 {
		t.Fatalf("want 2 errors, got %v", err)
	}
	if errs[0].Code != CodeKeyUnknown || errs[0].Source != "flag --nope" {
		t.Errorf("unknown override: %v", errs[0])
	}
	if errs[1].Code != CodeTypeInvalid || errs[1].Key != "worker.deploy_concurrency" || errs[1].Source != "flag --concurrency" {
		t.Errorf("bad override: %v", errs[1])
	}
}

func TestLoad_FileLocation(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "missing.toml")
	good := writeFile(t, "[worker]\ndeploy_concurrency = 7\n")

	if c, err := (Options{Path: missing, LookupEnv: noEnv}).Load(); err != nil || !reflect.DeepEqual(c, Default()) {
		t.Errorf("missing default file: %v", err)
	}
	_, err := Options{Path: missing, Explicit: true, LookupEnv: noEnv}.Load()
	if e := onlyError(t, err); e.Code != CodeFileMissing || e.Source != missing {
		t.Errorf("missing explicit file: %v", e)
	}
	c, err := Options{LookupEnv: envOf(map[string]string{EnvConfigPath: good})}.Load()
	if err != nil || c.Worker.DeployConcurrency != 7 {
		t.Errorf("SLIPWAY_CONFIG=%s: %d, %v", good, c.Worker.DeployConcurrency, err)
	}
	_, err = Options{LookupEnv: envOf(map[string]string{EnvConfigPath: missing})}.Load()
	if e := onlyError(t, err); e.Code != CodeFileMissing {
		t.Errorf("SLIPWAY_CONFIG naming a missing file must fail: %v", e)
	}
	c, err = Options{Fallback: good, LookupEnv: noEnv}.Load()
	if err != nil || c.Worker.DeployConcurrency != 7 {
		t.Errorf("Fallback %s: %d, %v", good, c.Worker.DeployConcurrency, err)
	}
	c, err = Options{Fallback: missing, LookupEnv: envOf(map[string]string{EnvConfigPath: good})}.Load()
	if err != nil || c.Worker.DeployConcurrency != 7 {
		t.Errorf("SLIPWAY_CONFIG must win over Fallback: %d, %v", c.Worker.DeployConcurrency, err)
	}
	if c, err := (Options{Fallback: missing, LookupEnv: noEnv}).Load(); err != nil || !reflect.DeepEqual(c, Default()) {
		t.Errorf("missing fallback file: %v", err)
	}
	dir := t.TempDir()
	_, err = Options{Path: dir, Explicit: true, LookupEnv: noEnv}.Load()
	if e := onlyError(t, err); e.Code != CodeFileUnreadable {
		t.Errorf("directory as file: %v", e)
	}
}

func TestDecode_Errors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		doc        string
		wantKey    string
		wantCode   string
		line, col  int
		wantInText string
	}{
		{"unknown top-level key", "listen = \"127.0.0.1:1\"\nlisten_addr = \"x\"\n", "listen_addr", CodeKeyUnknown, 2, 1, "unknown key"},
		{"key in the wrong table", "http_port = 8080\n", "http_port", CodeKeyUnknown, 1, 1, "did you mean ingress.http_port?"},
		{"unknown nested key", "[ingress]\nenabled = true\n\n[ingress.acme]\n  emial = \"a@b.c\"\n", "ingress.acme.emial", CodeKeyUnknown, 5, 3, "did you mean ingress.acme.email?"},
		{"unrelated unknown key", "colour = \"blue\"\n", "colour", CodeKeyUnknown, 1, 1, "for every key"},
		{"unknown table", "[previewz]\nmax_total = 1\n", "previewz", CodeKeyUnknown, 1, 2, "did you mean previews?"},
		{"string for integer", "[reconciliation]\nconvergence_timeout_seconds = \"2m\"\n", "reconciliation.convergence_timeout_seconds", CodeTypeInvalid, 2, 31, "must be an integer, got a string"},
		{"integer for string", "listen = 8080\n", "listen", CodeTypeInvalid, 1, 10, "must be a string, got an integer"},
		{"integer for boolean", "[images]\npull = 1\n", "images.pull", CodeTypeInvalid, 2, 8, "must be a boolean, got an integer"},
		{"float for integer", "[worker]\ndeploy_concurrency = 1.5\n", "worker.deploy_concurrency", CodeTypeInvalid, 2, 22, "must be an integer, got a float"},
		{"value for a table", "reconciliation = 3\n", "reconciliation", CodeTypeInvalid, 1, 18, "must be a table ([reconciliation])"},
		{"syntax", "listen = \n", "", CodeSyntax, 1, 10, "unexpected character"},
		{"out of range", "[reconciliation]\nscan_interval_seconds = 0\n", "reconciliation.scan_interval_seconds", CodeOutOfRange, 2, 1, "must be between 1 and 86400, got 0"},
		{"port out of range", "[ingress]\nhttp_port = 70000\n", "ingress.http_port", CodeOutOfRange, 2, 1, "got 70000"},
		{"same ports", "[ingress]\nhttp_port = 8443\nhttps_port = 8443\n", "ingress.https_port", CodeConflict, 3, 1, "same port"},
		{"inline table position", "ingress = { acme = { email = \"not an address\" } }\n", "ingress.acme.email", CodeValueInvalid, 1, 22, "bare email address"},
		{"dotted key position", "ingress.acme.directory = \"ftp://x\"\n", "ingress.acme.directory", CodeURLInvalid, 1, 1, "http:// or https://"},
		{"public url with path query", "public_url = \"https://x.example.com/?a=b\"\n", "public_url", CodeURLInvalid, 1, 1, "without credentials, query"},
		{"listen without port", "listen = \"localhost\"\n", "listen", CodeAddressInvalid, 1, 1, "host:port"},
		{"private addr not an IP", "[ingress]\nprivate_addr = \"vpn.local:443\"\n", "ingress.private_addr", CodeAddressInvalid, 2, 1, "IP address"},
		{"image with scheme", "[ingress]\nimage = \"https://r/x\"\n", "ingress.image", CodeValueInvalid, 2, 1, "image reference"},
		{"image upper case", "[ingress]\nimage = \"Slipway:1\"\n", "ingress.image", CodeValueInvalid, 2, 1, "image reference"},
		{"image bad digest", "[ingress]\nimage = \"slipway@sha256:abc\"\n", "ingress.image", CodeValueInvalid, 2, 1, "image reference"},
		{"database url scheme", "database_url = \"mysql://u:pw@h/db\"\n", "database_url", CodeURLInvalid, 1, 1, "postgres://"},
		{"installation id", "installation_id = \"Prod_1\"\n", "installation_id", CodeValueInvalid, 1, 1, "lowercase"},
		{"log level", "log_level = \"verbose\"\n", "log_level", CodeValueInvalid, 1, 1, "debug, info, warn or error"},
		{"previews more per app than total", "[previews]\nmax_per_application = 20\nmax_total = 10\n", "previews.max_per_application", CodeConflict, 2, 1, "more than previews.max_total"},
		{"preview memory below docker's minimum", "[previews]\ndefault_memory_bytes = 1024\n", "previews.default_memory_bytes", CodeOutOfRange, 2, 1, "got 1024"},
		{"github app without key", "[github]\napp_id = 7\nwebhook_secret_file = \"/w\"\n", "github.private_key_file", CodeRequired, 0, 0, "required when github.app_id is set"},
		{"github slug", "[github]\napp_slug = \"My App\"\n", "github.app_slug", CodeValueInvalid, 2, 1, "lowercase"},
		{"gateway token twice", "[ingress]\ngateway_token = \"a\"\ngateway_token_file = \"/t\"\n", "ingress.gateway_token", CodeConflict, 2, 1, "not both"},
		{"gateway metrics without a token", "[ingress]\nmetrics_addr = \"127.0.0.1:9100\"\n", "ingress.metrics_token_file", CodeRequired, 0, 0, "absolute path"},
		{"gateway metrics addr not an IP", "[ingress]\nmetrics_addr = \"gw.local:9100\"\nmetrics_token_file = \"/t\"\n", "ingress.metrics_addr", CodeAddressInvalid, 2, 1, "IP address"},
		{"metrics token twice", "[metrics]\ntoken = \"a\"\ntoken_file = \"/t\"\n", "metrics.token", CodeConflict, 2, 1, "not both"},
		{"otlp endpoint", "[telemetry]\notlp_endpoint = \"collector:4318\"\n", "telemetry.otlp_endpoint", CodeURLInvalid, 2, 1, "http://"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Decode([]byte(tt.doc), "slipway.toml")
			e := onlyError(t, err)
			if e.Key != tt.wantKey || e.Code != tt.wantCode || e.Line != tt.line || e.Column != tt.col || !strings.Contains(e.Message, tt.wantInText) {
				t.Errorf("got %+v\nwant key %q code %s at %d:%d with %q", *e, tt.wantKey, tt.wantCode, tt.line, tt.col, tt.wantInText)
			}
			if tt.line > 0 && e.Source != "slipway.toml" {
				t.Errorf("source = %q", e.Source)
			}
		})
	}
}

func TestLoad_EveryProblemAtOnce(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "[ingress]\nhttp_port = 0\nbogus = 1\n")
	_, err := Options{Path: path, LookupEnv: envOf(map[string]string{"SLIPWAY_WORKER_DEPLOY_CONCURRENCY": "x"})}.Load()
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("got %v", err)
	}
	var got []string
	for _, e := range errs {
		got = append(got, fmt.Sprintf("%s %s %s %d:%d", e.Key, e.Code, e.Source, e.Line, e.Column))
	}
	want := []string{
		"ingress.bogus config_key_unknown " + path + " 3:1",
		"worker.deploy_concurrency config_type_invalid env SLIPWAY_WORKER_DEPLOY_CONCURRENCY 0:0",
		"ingress.http_port config_value_out_of_range " + path + " 2:1",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestDecode_EveryUnknownKeyAtOnce(t *testing.T) {
	t.Parallel()
	_, err := Decode([]byte("a = 1\n[worker]\nb = 2\n"), "f.toml")
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 2 || errs[0].Key != "a" || errs[1].Key != "worker.b" || errs[1].Line != 3 {
		t.Fatalf("got %v", err)
	}
	if got, want := errs[1].Error(), "f.toml:3:1: worker.b: unknown key; see docs/configuration.md for every key (config_key_unknown)"; got != want {
		t.Errorf("Error() = %q\nwant      %q", got, want)
	}
}

func TestDecode_SecretValuesNeverQuoted(t *testing.T) {
	t.Parallel()
	_, err := Decode([]byte("database_url = \"mysql://u:hunter2@h/db\"\n"), "f.toml")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error must exist and not quote the password: %v", err)
	}
}

func TestDefaultFile_DecodesToDefault(t *testing.T) {
	t.Parallel()
	c, err := Decode(DefaultFile(), "default")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, Default()) {
		t.Errorf("commented default file decodes to %+v", c)
	}
	// Uncommenting every setting must give the defaults too, so the
	// values shown are the real ones and valid TOML.
	setting := regexp.MustCompile(`(?m)^# ([a-z_]+ = .*)$`)
	uncommented := setting.ReplaceAll(DefaultFile(), []byte("$1"))
	if n := len(setting.FindAll(DefaultFile(), -1)); n != len(fields()) {
		t.Errorf("default file shows %d settings, want %d", n, len(fields()))
	}
	c, err = Decode(uncommented, "uncommented")
	if err != nil {
		t.Fatalf("uncommented default file: %v\n%s", err, uncommented)
	}
	if !reflect.DeepEqual(c, Default()) {
		t.Errorf("uncommented default file decodes to %+v", c)
	}
	for _, f := range fields() {
		if !bytes.Contains(DefaultFile(), []byte(f.Env)) {
			t.Errorf("default file does not name %s", f.Env)
		}
	}
}

func TestWriteDefault(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "slipway.toml")
	if err := WriteDefault(path); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", st.Mode(), err)
	}
	c, err := Options{Path: path, Explicit: true, LookupEnv: noEnv}.Load()
	if err != nil || !reflect.DeepEqual(c, Default()) {
		t.Fatalf("load written default: %+v, %v", c, err)
	}
	if err := os.WriteFile(path, []byte("[worker]\ndeploy_concurrency = 9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteDefault(path); !errors.Is(err, fs.ErrExist) {
		t.Errorf("second write: %v, want fs.ErrExist", err)
	}
	if c, _ := (Options{Path: path, Explicit: true, LookupEnv: noEnv}).Load(); c.Worker.DeployConcurrency != 9 {
		t.Errorf("WriteDefault replaced an existing file")
	}
}

func TestDocCurrent(t *testing.T) {
	t.Parallel()
	path := filepath.Join("..", "docs", "configuration.md")
	want := Markdown()
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v; run go test ./config -run TestDocCurrent -update", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale; run go test ./config -run TestDocCurrent -update", path)
	}
}

func TestMarkdown_ListsEveryKey(t *testing.T) {
	t.Parallel()
	md := string(Markdown())
	for _, f := range fields() {
		for _, s := range append([]string{"`" + f.Key + "`", "`" + f.Env + "`"}, f.Aliases...) {
			if !strings.Contains(md, s) {
				t.Errorf("configuration.md lacks %s", s)
			}
		}
		if f.Doc == "" {
			t.Errorf("%s has no doc tag", f.Key)
		}
	}
	for _, s := range sections() {
		if s.Key != "" && !strings.Contains(md, "## `["+s.Key+"]`") {
			t.Errorf("configuration.md lacks section %s", s.Key)
		}
	}
}

func TestEnvVars(t *testing.T) {
	t.Parallel()
	seen := map[string]string{}
	for _, v := range EnvVars() {
		if prev, dup := seen[v.Name]; dup {
			t.Errorf("%s names both %s and %s", v.Name, prev, v.Key)
		}
		seen[v.Name] = v.Key
	}
	if seen["DATABASE_URL"] != "database_url" || seen["SLIPWAY_INGRESS_ACME_EMAIL"] != "ingress.acme.email" {
		t.Errorf("EnvVars: %v", seen)
	}
}

func TestRedacted(t *testing.T) {
	t.Parallel()
	c := sample()
	r := c.Redacted()
	if r.DatabaseURL != "(secret)" || r.SecretKey != "(secret)" || r.Metrics.Token != "(secret)" || r.Listen != c.Listen {
		t.Errorf("Redacted: %+v", r)
	}
	if d := Default(); !reflect.DeepEqual(d.Redacted(), d) {
		t.Errorf("empty secrets must stay empty")
	}
}

func onlyError(t *testing.T, err error) *Error {
	t.Helper()
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 1 {
		t.Fatalf("want exactly one config error, got %v", err)
	}
	return errs[0]
}
