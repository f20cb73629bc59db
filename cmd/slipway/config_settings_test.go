package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/runtime/ingress"
	"github.com/slipwayhq/slipway/store"
)

// clearConfigEnv blanks every variable the loader reads (an empty one
// counts as unset) and the older switches cmd/slipway reads itself, so a
// test sees only its file.
func clearConfigEnv(t *testing.T) {
	t.Helper()
	t.Setenv(config.EnvConfigPath, "")
	for _, v := range config.EnvVars() {
		t.Setenv(v.Name, "")
	}
	for _, name := range []string{envGateway, github.EnvWebURL, ingress.EnvInternalCA} {
		t.Setenv(name, "")
	}
}

// TestConfigFileReachesConsumers: every key set only in the file (no
// environment) reaches the settings serve, worker and dev hand to their
// parts. Not parallel: it blanks the process environment.
func TestConfigFileReachesConsumers(t *testing.T) {
	clearConfigEnv(t)
	dir := t.TempDir()
	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	keyText, err := keyring.Generate()
	if err != nil {
		t.Fatal(err)
	}
	keyFile := write("secret.key", keyText)
	pemFile := write("app.pem", "-----BEGIN RSA PRIVATE KEY-----\nnot checked here\n-----END RSA PRIVATE KEY-----\n")
	hookFile := write("hook.secret", "s3cret\n")
	file := write("slipway.toml", `
listen = "127.0.0.1:7123"
public_url = "https://slipway.example.com"
secret_key_file = "`+keyFile+`"
log_level = "debug"
installation_id = "blue"
secure_cookies = true

[reconciliation]
convergence_timeout_seconds = 45
prepare_timeout_seconds = 90
scan_interval_seconds = 17

[ingress]
enabled = false
http_port = 8081
https_port = 8443
private_addr = "127.0.0.1:9443"
image = "registry.example.com/slipway:1.2.0"
max_body_bytes = 0
body_idle_timeout_seconds = 5
send_timeout_seconds = 7
trusted_proxies = ["10.0.0.0/8", "192.168.1.5"]

[ingress.acme]
directory = "https://acme.example.com/directory"
email = "ops@example.com"
ca_root = "/etc/slipway/acme-root.pem"
cert_dir = "/etc/slipway/certs"

[github]
api_url = "https://ghe.example.com/api/v3"
app_id = 42
app_slug = "slipway-test"
private_key_file = "`+pemFile+`"
webhook_secret_file = "`+hookFile+`"

[worker]
deploy_concurrency = 7

[images]
pull = false
`)

	serve := newServeCommand()
	if err := serve.ParseFlags([]string{"--config", file}); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(serve, serveFlagKeys)
	if err != nil {
		t.Fatal(err)
	}

	if cfg.Listen != "127.0.0.1:7123" || !cfg.SecureCookies {
		t.Errorf("serve listen, secure_cookies = %q, %v; want the file's", cfg.Listen, cfg.SecureCookies)
	}

	got := pipelineSettingsOf(cfg)
	if got.Outbound == nil {
		t.Error("pipeline settings carry no outbound policy")
	}
	got.Outbound = nil
	if got != (pipelineSettings{ConvergenceTimeout: 45 * time.Second, PrepareTimeout: 90 * time.Second, PullImages: false, Installation: "blue", Ingress: false}) {
		t.Errorf("pipeline settings = %+v", got)
	}

	if got := keyringConfig(cfg); got != (keyring.Config{KeyFile: keyFile}) {
		t.Errorf("keyring config = %+v", got)
	}
	if _, err := loadSecretKey(cfg); err != nil {
		t.Errorf("secret key from secret_key_file: %v", err)
	}

	gh, ok := githubSettings(cfg, slog.New(slog.DiscardHandler))
	if !ok {
		t.Fatal("github: the file's App was not configured")
	}
	if gh.AppID != 42 || gh.AppSlug != "slipway-test" || gh.APIURL != "https://ghe.example.com/api/v3/" ||
		gh.WebURL != "https://ghe.example.com/" || string(gh.WebhookSecret) != "s3cret" || !strings.Contains(string(gh.PrivateKey), "not checked here") {
		t.Errorf("github config = %+v", gh)
	}

	jc := jobsConfig(cfg, true, nil)
	if jc.ReconcileInterval != 17*time.Second || jc.DeployConcurrency != 7 || !jc.Work {
		t.Errorf("jobs config: reconcile %v, deploy concurrency %d, work %v", jc.ReconcileInterval, jc.DeployConcurrency, jc.Work)
	}

	gc := gatewayContainerConfig(cfg)
	if gc.HTTPPort != 8081 || gc.HTTPSPort != 8443 || gc.PrivateAddr != "127.0.0.1:9443" || gc.Image != "registry.example.com/slipway:1.2.0" {
		t.Errorf("gateway config = %+v", gc)
	}
	wantEnv := map[string]string{
		ingress.EnvACMEDirectory: "https://acme.example.com/directory",
		ingress.EnvACMEEmail:     "ops@example.com",
		ingress.EnvACMECARoot:    "/etc/slipway/acme-root.pem",
		ingress.EnvCertDir:       "/etc/slipway/certs",
		// 0: no limit, for the gateway as in the file.
		ingress.EnvMaxBodyBytes:    "0",
		ingress.EnvBodyIdleTimeout: "5",
		ingress.EnvSendTimeout:     "7",
		ingress.EnvTrustedProxies:  "10.0.0.0/8,192.168.1.5",
	}
	if len(gc.Env) != len(wantEnv) {
		t.Errorf("gateway env = %v, want %v", gc.Env, wantEnv)
	}
	for k, v := range wantEnv {
		if gc.Env[k] != v {
			t.Errorf("gateway env %s = %q, want %q", k, gc.Env[k], v)
		}
	}
	if gatewayEnabled(cfg) {
		t.Error("ingress.enabled = false still runs the gateway")
	}

	if logLevelOf(cfg) != slog.LevelDebug {
		t.Errorf("log level = %v, want debug", logLevelOf(cfg))
	}
	t.Cleanup(func() { processLogLevel.Set(slog.LevelInfo) })
	logger := newLogger()
	if logger.Enabled(context.Background(), slog.LevelDebug) {
		t.Fatal("debug logged before log_level was applied")
	}
	setLogLevel(cfg)
	if !logger.Enabled(context.Background(), slog.LevelDebug) {
		t.Error("log_level = debug not applied to a logger made before the configuration was loaded")
	}
}

// TestServeFlagsWinOverFile: serve's --listen and --secure-cookies, when
// given, beat the file; defaults (config.Default) match the file's.
func TestServeFlagsWinOverFile(t *testing.T) {
	clearConfigEnv(t)
	file := filepath.Join(t.TempDir(), "slipway.toml")
	if err := os.WriteFile(file, []byte("listen = \"127.0.0.1:7123\"\nsecure_cookies = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	serve := newServeCommand()
	if err := serve.ParseFlags([]string{"--config", file, "--listen", "127.0.0.1:7124", "--secure-cookies=false"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(serve, serveFlagKeys)
	if err != nil || cfg.Listen != "127.0.0.1:7124" || cfg.SecureCookies {
		t.Errorf("flags: listen %q, secure_cookies %v, %v; want the flags' values", cfg.Listen, cfg.SecureCookies, err)
	}
}

// TestGatewayOffSwitches: SLIPWAY_GATEWAY=off, the older switch, still
// keeps dev from running the gateway with ingress.enabled at its default;
// SLIPWAY_INGRESS_ENABLED=false does too.
func TestGatewayOffSwitches(t *testing.T) {
	clearConfigEnv(t)
	if !gatewayEnabled(config.Default()) {
		t.Fatal("default: gateway off")
	}
	t.Setenv(envGateway, "off")
	if gatewayEnabled(config.Default()) {
		t.Error("SLIPWAY_GATEWAY=off ignored")
	}
	t.Setenv(envGateway, "")
	t.Setenv("SLIPWAY_INGRESS_ENABLED", "false")
	cfg, err := config.Options{Path: filepath.Join(t.TempDir(), "missing.toml")}.Load()
	if err != nil {
		t.Fatal(err)
	}
	if gatewayEnabled(cfg) {
		t.Error("SLIPWAY_INGRESS_ENABLED=false ignored")
	}
}

// TestMigrateReadsDatabaseURLFromFile: slipway migrate takes database_url
// from --config when no variable sets it: it tries that server rather than
// complaining that DATABASE_URL is unset.
func TestMigrateReadsDatabaseURLFromFile(t *testing.T) {
	clearConfigEnv(t)
	file := filepath.Join(t.TempDir(), "slipway.toml")
	// Port 1 on loopback refuses at once.
	if err := os.WriteFile(file, []byte("database_url = \"postgres://nobody@127.0.0.1:1/none?connect_timeout=2\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs([]string{"migrate", "--check", "--config", file})
	err := root.Execute()
	if err == nil {
		t.Fatal("migrate against a closed port succeeded")
	}
	if strings.Contains(err.Error(), "is not set") || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("migrate error = %v; want a connection error naming the file's server", err)
	}
}

// TestIngressDisabled: with ingress.enabled = false dev starts neither the
// route feed nor the gateway, and deployments keep their routes without
// joining a gateway to the overlay.
func TestIngressDisabled(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.Ingress.Enabled = false
	dataDir := t.TempDir()
	var out bytes.Buffer
	if err := startDevGateway(t.Context(), nil, nil, cfg, dataDir, &out, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "gateway")); !os.IsNotExist(err) {
		t.Errorf("gateway socket directory created with ingress off: %v", err)
	}
	if !strings.Contains(out.String(), "ingress.enabled = false") {
		t.Errorf("output %q does not say ingress is off", out.String())
	}
	hook := gatewayRoutes(nil, nil, nil, false)
	if proxies, err := hook.Connect(t.Context(), store.Environment{}, "slipway-ingress-x"); err != nil || proxies != "" {
		t.Errorf("Connect with ingress off = %q, %v; want no proxies, no error", proxies, err)
	}
}
