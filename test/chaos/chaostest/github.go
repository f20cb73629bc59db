package chaostest

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/forge/github/githubtest"
)

// GitHubEnv configures serve or worker with the fake's GitHub App: its API,
// key and webhook secret.
func GitHubEnv(t testing.TB, fake *githubtest.Server) []string {
	t.Helper()
	dir := t.TempDir()
	key, secret := filepath.Join(dir, "app.pem"), filepath.Join(dir, "webhook.secret")
	if err := os.WriteFile(key, fake.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte(fake.WebhookSecret), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{
		github.EnvAppID + "=" + strconv.FormatInt(fake.AppID, 10),
		github.EnvAppSlug + "=" + fake.Slug,
		github.EnvAPIURL + "=" + fake.URL + "/",
		github.EnvWebURL + "=" + fake.URL + "/",
		github.EnvPrivateKeyFile + "=" + key,
		github.EnvWebhookSecretFile + "=" + secret,
	}
}
