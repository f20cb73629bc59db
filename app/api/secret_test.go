package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
)

// secretValue is distinctive so that any leak into a response shows up
// with a plain substring search.
const secretValue = "zq-SECRET-VALUE-7f3a91"

// setupSecrets is setupDeploy with a keyring-backed secret service.
func setupSecrets(t *testing.T) *deployBundle {
	t.Helper()
	b := setupDeploy(t)
	keyText, err := keyring.Generate()
	if err != nil {
		t.Fatal(err)
	}
	kr, err := keyring.Parse([]byte(keyText))
	if err != nil {
		t.Fatal(err)
	}
	b.f = fiber.New(fiber.Config{BodyLimit: 1 << 20})
	api.Register(b.f.Group("/api/v1"), api.Config{Store: b.st, Logger: slog.New(slog.DiscardHandler), Now: time.Now, Jobs: b.jobs, Runtime: b.runtime,
		Secrets: secrets.New(b.st, kr)})
	return b
}

// call sends a JSON body and returns status and raw body, failing the
// test if the secret value is anywhere in the answer.
func (b *deployBundle) call(t *testing.T, token, method, path string, body any) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := b.f.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if strings.Contains(string(raw), secretValue) {
		t.Fatalf("%s %s: the response contains the secret value: %s", method, path, raw)
	}
	return res.StatusCode, string(raw)
}

func wantCall(t *testing.T, status int, raw string, wantStatus int, code string) map[string]any {
	t.Helper()
	var body map[string]any
	if raw != "" {
		if err := json.Unmarshal([]byte(raw), &body); err != nil {
			t.Fatalf("body is not JSON: %s", raw)
		}
	}
	if status != wantStatus || (code != "" && body["code"] != code) {
		t.Fatalf("status %d body %s, want %d %s", status, raw, wantStatus, code)
	}
	return body
}

func TestSecrets_SetListAccessDelete(t *testing.T) {
	t.Parallel()
	b := setupSecrets(t)
	want(t, b.apply(t, twoEnvs+"\n[[spec.secrets]]\nname = \"api-key\"\ngenerate = { type = \"random\", bytes = 32 }\n", ""), http.StatusCreated, "")
	base := "/api/v1/applications/notes/secrets"
	val := secretValue

	st, raw := b.call(t, b.owner, http.MethodPut, base+"/db-password", api.SecretSetRequest{Value: &val, Environments: &[]string{"staging"}})
	wantCall(t, st, raw, http.StatusOK, "")
	var s api.Secret
	_ = json.Unmarshal([]byte(raw), &s)
	if s.Name != "db-password" || s.Version != 1 || s.AllEnvironments || len(s.Environments) != 1 || s.Environments[0] != "staging" || s.Previews {
		t.Fatalf("set: %+v", s)
	}
	other := secretValue + "-v2"
	st, raw = b.call(t, b.owner, http.MethodPut, base+"/db-password", api.SecretSetRequest{Value: &other})
	wantCall(t, st, raw, http.StatusOK, "")
	_ = json.Unmarshal([]byte(raw), &s)
	if s.Version != 2 || s.AllEnvironments || s.Environments[0] != "staging" {
		t.Fatalf("second set changed access or not the version: %+v", s)
	}

	// Sending previews alone keeps the environments.
	yes := true
	st, raw = b.call(t, b.owner, http.MethodPut, base+"/db-password", api.SecretSetRequest{Value: &other, Previews: &yes})
	wantCall(t, st, raw, http.StatusOK, "")
	_ = json.Unmarshal([]byte(raw), &s)
	if s.Version != 3 || s.AllEnvironments || strings.Join(s.Environments, ",") != "staging" || !s.Previews {
		t.Fatalf("previews only: %+v", s)
	}

	// Viewers read names; only secrets:write changes anything.
	st, raw = b.call(t, b.viewer, http.MethodGet, base, nil)
	wantCall(t, st, raw, http.StatusOK, "")
	var l api.SecretList
	_ = json.Unmarshal([]byte(raw), &l)
	if len(l.Secrets) != 1 || l.Secrets[0].Name != "db-password" || l.Secrets[0].Version != 3 || l.Secrets[0].UpdatedAt.IsZero() {
		t.Fatalf("list: %s", raw)
	}
	if strings.Contains(raw, `"value"`) {
		t.Fatalf("list has a value field: %s", raw)
	}
	st, raw = b.call(t, b.viewer, http.MethodPut, base+"/db-password", api.SecretSetRequest{Value: &val})
	wantCall(t, st, raw, http.StatusForbidden, "permission_denied")
	// A developer's token without secrets:write is refused too.
	ctx := context.Background()
	members, err := b.st.ListMembers(ctx, b.team.ID)
	if err != nil {
		t.Fatal(err)
	}
	ownerID := ""
	for _, m := range members {
		if m.Role == store.RoleOwner {
			ownerID = m.UserID
		}
	}
	_, appsOnly, err := service.CreateToken(ctx, b.st, service.Actor{TeamID: b.team.ID, UserID: ownerID, Scopes: auth.AllScopes},
		service.TokenRequest{Name: "apps-only", Scopes: []string{string(auth.AppsRead), string(auth.AppsWrite)}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []struct{ method, path string }{
		{http.MethodPut, base + "/db-password"}, {http.MethodDelete, base + "/db-password"}, {http.MethodPut, base + "/db-password/access"},
		{http.MethodPost, "/api/v1/applications/notes/environments/staging/generated-secrets/api-key/regenerate"},
	} {
		st, raw = b.call(t, appsOnly, req.method, req.path, api.SecretSetRequest{Value: &val})
		body := wantCall(t, st, raw, http.StatusForbidden, "permission_denied")
		if d, _ := body["details"].(map[string]any); d["permission"] != "secrets:write" {
			t.Fatalf("%s %s: %s", req.method, req.path, raw)
		}
	}

	// Bad input names its field and code.
	st, raw = b.call(t, b.owner, http.MethodPut, base+"/db-password", map[string]any{})
	wantCall(t, st, raw, http.StatusUnprocessableEntity, "field_required")
	empty := ""
	st, raw = b.call(t, b.owner, http.MethodPut, base+"/db-password", api.SecretSetRequest{Value: &empty})
	wantCall(t, st, raw, http.StatusUnprocessableEntity, "secret_value_empty")
	st, raw = b.call(t, b.owner, http.MethodPut, base+"/Bad_Name", api.SecretSetRequest{Value: &val})
	wantCall(t, st, raw, http.StatusUnprocessableEntity, "name_invalid")
	st, raw = b.call(t, b.owner, http.MethodPut, base+"/api-key", api.SecretSetRequest{Value: &val})
	body := wantCall(t, st, raw, http.StatusConflict, "secret_name_conflict")
	if d, _ := body["details"].(map[string]any); d["field"] != "name" {
		t.Fatalf("conflict: %s", raw)
	}
	st, raw = b.call(t, b.owner, http.MethodPut, base+"/db-password/access", api.SecretAccessRequest{Environments: []string{"nowhere"}})
	wantCall(t, st, raw, http.StatusUnprocessableEntity, "environment_not_found")
	st, raw = b.call(t, b.owner, http.MethodPut, base+"/missing/access", api.SecretAccessRequest{})
	wantCall(t, st, raw, http.StatusNotFound, "secret_not_found")

	// Access: every environment keeps previews unless sent.
	st, raw = b.call(t, b.owner, http.MethodPut, base+"/db-password/access", api.SecretAccessRequest{Environments: []string{"staging", "production"}, Previews: &yes})
	wantCall(t, st, raw, http.StatusOK, "")
	_ = json.Unmarshal([]byte(raw), &s)
	if s.AllEnvironments || strings.Join(s.Environments, ",") != "production,staging" || !s.Previews {
		t.Fatalf("access: %+v", s)
	}
	st, raw = b.call(t, b.owner, http.MethodPut, base+"/db-password/access", api.SecretAccessRequest{AllEnvironments: &yes})
	wantCall(t, st, raw, http.StatusOK, "")
	_ = json.Unmarshal([]byte(raw), &s)
	if !s.AllEnvironments || len(s.Environments) != 0 || !s.Previews {
		t.Fatalf("access all: %+v", s)
	}

	// Another team sees nothing of this application.
	_, team2, err := service.Signup(ctx, b.st, auth.TestArgon2, service.SignupRequest{Email: "other@example.com", Password: "correct horse battery", TeamName: "Others"})
	if err != nil {
		t.Fatal(err)
	}
	m2, err := b.st.ListMembers(ctx, team2.ID)
	if err != nil || len(m2) == 0 {
		t.Fatalf("members: %v", err)
	}
	_, stranger, err := service.CreateToken(ctx, b.st, service.Actor{TeamID: team2.ID, UserID: m2[0].UserID, Scopes: auth.AllScopes},
		service.TokenRequest{Name: "stranger", Scopes: auth.Strings(auth.AllScopes)}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	st, raw = b.call(t, stranger, http.MethodGet, base, nil)
	wantCall(t, st, raw, http.StatusNotFound, "not_found")
	st, raw = b.call(t, stranger, http.MethodPut, base+"/db-password", api.SecretSetRequest{Value: &val})
	wantCall(t, st, raw, http.StatusNotFound, "not_found")
	st, raw = b.call(t, stranger, http.MethodDelete, base+"/db-password", nil)
	wantCall(t, st, raw, http.StatusNotFound, "not_found")

	// Delete, then it is gone.
	st, raw = b.call(t, b.owner, http.MethodDelete, base+"/db-password", nil)
	wantCall(t, st, raw, http.StatusNoContent, "")
	st, raw = b.call(t, b.owner, http.MethodGet, base, nil)
	wantCall(t, st, raw, http.StatusOK, "")
	if !strings.Contains(raw, `"secrets":[]`) {
		t.Fatalf("after delete: %s", raw)
	}
	st, raw = b.call(t, b.owner, http.MethodDelete, base+"/db-password", nil)
	wantCall(t, st, raw, http.StatusNotFound, "secret_not_found")
}

func TestSecrets_GeneratedListAndRegenerate(t *testing.T) {
	t.Parallel()
	b := setupSecrets(t)
	want(t, b.apply(t, twoEnvs, ""), http.StatusCreated, "")
	ctx := context.Background()
	app, err := b.st.GetApplicationByName(ctx, b.team.ID, "notes")
	if err != nil {
		t.Fatal(err)
	}
	env, err := b.st.GetEnvironmentByName(ctx, b.team.ID, app.ID, "staging")
	if err != nil {
		t.Fatal(err)
	}
	base := "/api/v1/applications/notes/environments/staging/generated-secrets"
	st, raw := b.call(t, b.viewer, http.MethodGet, base, nil)
	wantCall(t, st, raw, http.StatusOK, "")
	if !strings.Contains(raw, `"generated_secrets":[]`) {
		t.Fatalf("empty list: %s", raw)
	}
	st, raw = b.call(t, b.owner, http.MethodPost, base+"/session-key/regenerate", nil)
	wantCall(t, st, raw, http.StatusNotFound, "generated_secret_not_found")

	// A capture's first generation, as the worker would record it.
	if _, _, err := b.st.EnsureGeneratedSecret(ctx, b.team.ID, env.ID, "session-key", "test", func(store.SealedRef) (store.Sealed, error) {
		return store.Sealed{KeyID: "k", Nonce: []byte("n"), Ciphertext: []byte("c")}, nil
	}); err != nil {
		t.Fatal(err)
	}
	st, raw = b.call(t, b.viewer, http.MethodPost, base+"/session-key/regenerate", nil)
	wantCall(t, st, raw, http.StatusForbidden, "permission_denied")
	st, raw = b.call(t, b.owner, http.MethodPost, base+"/session-key/regenerate", nil)
	wantCall(t, st, raw, http.StatusOK, "")
	var g api.GeneratedSecret
	_ = json.Unmarshal([]byte(raw), &g)
	if g.Name != "session-key" || g.Version != 1 || !g.Regenerate {
		t.Fatalf("regenerate: %s", raw)
	}
	st, raw = b.call(t, b.viewer, http.MethodGet, base, nil)
	wantCall(t, st, raw, http.StatusOK, "")
	var l api.GeneratedSecretList
	_ = json.Unmarshal([]byte(raw), &l)
	if l.Environment != "staging" || len(l.GeneratedSecrets) != 1 || !l.GeneratedSecrets[0].Regenerate {
		t.Fatalf("list: %s", raw)
	}
	st, raw = b.call(t, b.owner, http.MethodGet, "/api/v1/applications/notes/environments/nowhere/generated-secrets", nil)
	wantCall(t, st, raw, http.StatusNotFound, "environment_not_found")
}

func TestSecrets_UnavailableWithoutKey(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t) // no Secrets in the config
	want(t, b.apply(t, notes, ""), http.StatusCreated, "")
	st, raw := b.call(t, b.owner, http.MethodGet, "/api/v1/applications/notes/secrets", nil)
	wantCall(t, st, raw, http.StatusServiceUnavailable, "secrets_unavailable")
}

// A manifest that declares a generated secret under a stored name is
// refused on apply, and nothing is saved.
func TestSecrets_ApplyRefusesStoredNameDeclared(t *testing.T) {
	t.Parallel()
	b := setupSecrets(t)
	want(t, b.apply(t, notes, ""), http.StatusCreated, "")
	val := secretValue
	st, raw := b.call(t, b.owner, http.MethodPut, "/api/v1/applications/notes/secrets/db-password", api.SecretSetRequest{Value: &val})
	wantCall(t, st, raw, http.StatusOK, "")
	r := b.apply(t, notes+"\n[[spec.secrets]]\nname = \"db-password\"\ngenerate = { type = \"random\", bytes = 32 }\n", "")
	want(t, r, http.StatusUnprocessableEntity, "manifest_validation_failed")
	if !strings.Contains(r.raw, `"path":"spec.secrets[0].name","code":"secret_name_conflict"`) {
		t.Fatalf("apply: %s", r.raw)
	}
	rev := b.do(t, b.owner, http.MethodGet, "/api/v1/applications/notes/manifest", "", nil)
	if !strings.Contains(rev.raw, `"revision":1`) {
		t.Fatalf("a revision was saved: %s", rev.raw)
	}
}
