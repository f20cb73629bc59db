package github_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/forge/github"
)

func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := filepath.Join(dir, "key.pem")
	secret := filepath.Join(dir, "secret")
	empty := filepath.Join(dir, "empty")
	for p, s := range map[string]string{key: "PEM\n", secret: " s3cret\n", empty: "\n"} {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	full := map[string]string{
		github.EnvAppID: "12", github.EnvAppSlug: "slipway", github.EnvPrivateKeyFile: key, github.EnvWebhookSecretFile: secret,
	}
	with := func(changes map[string]string) func(string) string {
		return func(k string) string {
			if v, ok := changes[k]; ok {
				return v
			}
			return full[k]
		}
	}
	tests := []struct {
		name      string
		env       map[string]string
		wantField string
		wantCode  string
		check     func(t *testing.T, c github.Config)
	}{
		{name: "github.com defaults", check: func(t *testing.T, c github.Config) {
			if c.APIURL != "https://api.github.com/" || c.WebURL != "https://github.com/" || c.AppID != 12 ||
				string(c.PrivateKey) != "PEM" || string(c.WebhookSecret) != "s3cret" {
				t.Fatalf("config = %+v", c)
			}
		}},
		{name: "enterprise", env: map[string]string{github.EnvAPIURL: "https://ghe.example.com/api/v3"}, check: func(t *testing.T, c github.Config) {
			if c.APIURL != "https://ghe.example.com/api/v3/" || c.WebURL != "https://ghe.example.com/" {
				t.Fatalf("config = %+v", c)
			}
		}},
		{name: "bad id", env: map[string]string{github.EnvAppID: "x"}, wantField: github.EnvAppID, wantCode: "app_id_invalid"},
		{name: "no slug", env: map[string]string{github.EnvAppSlug: ""}, wantField: github.EnvAppSlug, wantCode: "app_slug_missing"},
		{name: "no key file", env: map[string]string{github.EnvPrivateKeyFile: ""}, wantField: github.EnvPrivateKeyFile, wantCode: "private_key_file_missing"},
		{name: "unreadable", env: map[string]string{github.EnvWebhookSecretFile: filepath.Join(dir, "nope")}, wantField: github.EnvWebhookSecretFile, wantCode: "webhook_secret_file_unreadable"},
		{name: "empty secret", env: map[string]string{github.EnvWebhookSecretFile: empty}, wantField: github.EnvWebhookSecretFile, wantCode: "webhook_secret_file_empty"},
		{name: "bad api url", env: map[string]string{github.EnvAPIURL: "ftp://x"}, wantField: github.EnvAPIURL, wantCode: "api_url_invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := github.ConfigFromEnv(with(tt.env), nil)
			if tt.wantCode != "" {
				var ce *github.ConfigError
				if !errors.As(err, &ce) || ce.Field != tt.wantField || ce.Code != tt.wantCode {
					t.Fatalf("err = %v, want %s %s", err, tt.wantField, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
	if _, err := github.ConfigFromEnv(func(string) string { return "" }, nil); !errors.Is(err, github.ErrNotConfigured) {
		t.Fatalf("unset: err = %v, want ErrNotConfigured", err)
	}
}

func TestInstallURL(t *testing.T) {
	t.Parallel()
	u, err := github.InstallURL(github.Config{AppSlug: "slip way"}, "a.b=")
	if err != nil {
		t.Fatal(err)
	}
	if u != "https://github.com/apps/slip%20way/installations/new?state=a.b%3D" {
		t.Fatalf("url = %s", u)
	}
	u, err = github.InstallURL(github.Config{APIURL: "https://ghe.example.com/api/v3/", AppSlug: "s"}, "x")
	if err != nil || u != "https://ghe.example.com/apps/s/installations/new?state=x" {
		t.Fatalf("ghe url = %s, %v", u, err)
	}
	f, err := github.ManifestFormURL(github.Config{}, "acme", "st")
	if err != nil || f != "https://github.com/organizations/acme/settings/apps/new?state=st" {
		t.Fatalf("manifest form url = %s, %v", f, err)
	}
	m := github.NewAppManifest("Slipway", "https://slipway.example.com/", "/github/manifest", "/github/setup")
	if js := m.JSON(); !strings.Contains(js, `"url":"https://slipway.example.com/webhooks/github"`) || !strings.Contains(js, `"statuses":"write"`) {
		t.Fatalf("manifest = %s", js)
	}
}
