package github_test

import (
	"bytes"
	"testing"

	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/store/storetest"
)

// The manifest flow end to end against the fake: the code GitHub returns is
// converted into credentials, stored sealed, loaded back, and the loaded
// configuration authenticates as the App.
func TestClient_ManifestFlow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	st := storetest.New(t)
	key, err := keyring.NewKey(bytes.Repeat([]byte{7}, keyring.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	kr := keyring.New(key)

	cfg := b.fake.Config()
	cfg.PrivateKey, cfg.WebhookSecret, cfg.AppID, cfg.AppSlug = nil, nil, 0, ""
	anon, err := github.New(cfg, github.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b.fake.AddManifestCode("code-1")
	creds, err := anon.ConvertManifest(b.ctx, "code-1")
	if err != nil {
		t.Fatal(err)
	}
	if creds.AppID != b.fake.AppID || creds.Slug != b.fake.Slug || creds.WebhookSecret != b.fake.WebhookSecret || creds.ClientID == "" {
		t.Fatalf("credentials = %+v", creds)
	}
	if _, err := anon.ConvertManifest(b.ctx, "code-1"); err == nil {
		t.Fatal("a code converted twice")
	}

	row, err := github.SaveApp(b.ctx, st, kr, creds)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(row.PrivateKeySealed, []byte("PRIVATE KEY")) || bytes.Contains(row.WebhookSecretSealed, []byte(creds.WebhookSecret)) {
		t.Fatal("secrets stored in clear")
	}
	loaded, err := github.LoadConfig(b.ctx, st, kr, b.fake.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	if string(loaded.WebhookSecret) != creds.WebhookSecret || loaded.AppSlug != creds.Slug {
		t.Fatalf("loaded = %+v", loaded)
	}
	app, err := github.New(loaded, github.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.InstallationToken(b.ctx, testInstallation); err != nil {
		t.Fatalf("the stored key does not authenticate: %v", err)
	}
	inst, err := app.GetInstallation(b.ctx, testInstallation)
	if err != nil || inst.AccountLogin != "acme" {
		t.Fatalf("installation = %+v, %v", inst, err)
	}

	// Another key cannot open them.
	otherKey, _ := keyring.NewKey(bytes.Repeat([]byte{8}, keyring.KeySize))
	if _, err := github.LoadConfig(b.ctx, st, keyring.New(otherKey), b.fake.URL, ""); err == nil {
		t.Fatal("opened with the wrong key")
	}
}
