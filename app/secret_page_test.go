package app_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

const pageSecretValue = "page-SECRET-VALUE-41bd9e"

// setupSecrets is setup with a secret store under a fresh key.
func setupSecrets(t *testing.T) *testBundle {
	t.Helper()
	st := storetest.New(t)
	keyText, err := keyring.Generate()
	if err != nil {
		t.Fatal(err)
	}
	kr, err := keyring.Parse([]byte(keyText))
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Now()}
	return &testBundle{store: st, clock: clk, app: app.New(app.Config{Store: st, Argon2: auth.TestArgon2, Now: clk.now,
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil)), Secrets: secrets.New(st, kr)})}
}

// TestSecretsTab drives the Secrets tab as an owner, then as a viewer who
// sees names only. No page ever contains the value.
func TestSecretsTab(t *testing.T) {
	t.Parallel()
	b := setupSecrets(t)
	st := b.store
	ctx := context.Background()
	owner := b.signup(t, "owner@example.com", "Vault")
	a, err := st.CreateApplication(ctx, owner.team.ID, "vault")
	if err != nil {
		t.Fatal(err)
	}
	staging, err := st.CreateEnvironment(ctx, owner.team.ID, store.EnvironmentParams{ApplicationID: a.ID, Kind: store.KindEnvironment, Name: "staging", Slug: "staging"})
	if err != nil {
		t.Fatal(err)
	}
	base := "/applications/" + a.ID + "/secrets"
	br := b.sessionBrowser(t, owner.user)
	noValue := func(r response) response {
		t.Helper()
		if strings.Contains(r.body, pageSecretValue) {
			t.Fatalf("the page contains the secret value:\n%s", truncate(r.body))
		}
		return r
	}

	r := noValue(br.get(base))
	wantStatus(t, r, http.StatusOK)
	if testid(r, "tab-secrets").AttrOr("aria-current", "") != "page" || testid(r, "secrets-empty").Length() != 1 || testid(r, "secret-set-form").Length() != 1 {
		t.Fatalf("empty tab: %s", truncate(r.body))
	}
	if typ := testid(r, "secret-value").Nodes; len(typ) != 1 || typ[0].Data != "textarea" {
		t.Fatal("no value textarea")
	}
	r = noValue(br.post(base, url.Values{"name": {"db-password"}, "value": {pageSecretValue}}))
	wantStatus(t, r, http.StatusOK)
	r = noValue(br.post(base, url.Values{"name": {"db-password"}, "value": {pageSecretValue + "-2"}}))
	wantStatus(t, r, http.StatusOK)
	row := r.doc.Find(`[data-testid="secret-row"][data-secret="db-password"]`)
	if row.Length() != 1 || row.Find(`[data-testid="secret-version"]`).Text() != "2" || row.Find(`[data-testid="secret-access"]`).Text() != "every environment" {
		t.Fatalf("after two sets: %s", truncate(r.body))
	}
	if !strings.Contains(testid(r, "secrets-notice").Text(), "version 2") {
		t.Errorf("notice: %q", testid(r, "secrets-notice").Text())
	}
	// A refused set names the code and does not echo the value back.
	r = noValue(br.post(base, url.Values{"name": {"Bad_Name"}, "value": {pageSecretValue}}))
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if !strings.Contains(testid(r, "error-secret").Text(), "name_invalid") {
		t.Fatalf("bad name: %s", truncate(r.body))
	}

	// Access: staging and previews.
	r = noValue(br.post(base+"/db-password/access", url.Values{"environment": {staging.ID}, "previews": {"true"}}))
	wantStatus(t, r, http.StatusOK)
	if got := r.doc.Find(`[data-secret="db-password"] [data-testid="secret-access"]`).Text(); got != "staging + previews" {
		t.Fatalf("access: %q", got)
	}
	r = noValue(br.post(base+"/db-password/access", url.Values{"environment": {"env_nope"}}))
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if !strings.Contains(testid(r, "secret-error").Text(), "environment_not_found") {
		t.Fatalf("unknown environment: %s", truncate(r.body))
	}

	// A generated secret, as a deployment's capture records it.
	if _, _, err := st.EnsureGeneratedSecret(ctx, owner.team.ID, staging.ID, "session-key", "test", func(store.SealedRef) (store.Sealed, error) {
		return store.Sealed{KeyID: "k", Nonce: []byte("n"), Ciphertext: []byte("c")}, nil
	}); err != nil {
		t.Fatal(err)
	}
	r = noValue(br.get(base))
	if testid(r, "generated-regenerate").Length() != 1 {
		t.Fatalf("no regenerate button: %s", truncate(r.body))
	}
	r = noValue(br.post("/applications/"+a.ID+"/environments/"+staging.ID+"/generated-secrets/session-key/regenerate", nil))
	wantStatus(t, r, http.StatusOK)
	if testid(r, "generated-pending").Length() != 1 || testid(r, "generated-regenerate").Length() != 0 {
		t.Fatalf("after regenerate: %s", truncate(r.body))
	}

	// A viewer sees names, versions and access, and no control.
	viewer := b.addMember(t, owner.team, "viewer@example.com", store.RoleViewer)
	vb := b.sessionBrowser(t, viewer)
	r = noValue(vb.get(base))
	wantStatus(t, r, http.StatusOK)
	if r.doc.Find(`[data-testid="secret-row"][data-secret="db-password"]`).Length() != 1 || testid(r, "generated-row").Length() != 1 {
		t.Fatalf("viewer does not see the names: %s", truncate(r.body))
	}
	for _, id := range []string{"secret-set-form", "secret-value", "secret-delete", "secret-access-form", "generated-regenerate"} {
		if testid(r, id).Length() != 0 {
			t.Errorf("the viewer is offered %s", id)
		}
	}
	wantStatus(t, vb.post(base, url.Values{"name": {"db-password"}, "value": {pageSecretValue}}), http.StatusForbidden)
	wantStatus(t, vb.post(base+"/db-password/delete", nil), http.StatusForbidden)
	if sec, err := st.GetSecretByName(ctx, owner.team.ID, a.ID, "db-password"); err != nil || sec.CurrentVersion != 2 {
		t.Fatalf("the viewer changed the secret: %+v %v", sec, err)
	}

	// Delete.
	r = noValue(br.post(base+"/db-password/delete", nil))
	wantStatus(t, r, http.StatusOK)
	if testid(r, "secrets-empty").Length() != 1 {
		t.Fatalf("after delete: %s", truncate(r.body))
	}
}
