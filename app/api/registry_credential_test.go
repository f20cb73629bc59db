package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
)

// TestRegistryCredentials_WriteOnlyAndTeamScoped sets, replaces, lists
// and deletes a team's registry account: the password never comes back
// (call fails on it), viewers list hosts but change nothing, bad input
// names its field, and another team sees and deletes nothing of it.
func TestRegistryCredentials_WriteOnlyAndTeamScoped(t *testing.T) {
	t.Parallel()
	b := setupSecrets(t)
	base := "/api/v1/registry-credentials"
	pw := secretValue

	st, raw := b.call(t, b.owner, http.MethodPut, base+"/GHCR.io", api.RegistryCredentialSetRequest{Username: "bot", Password: &pw})
	wantCall(t, st, raw, http.StatusOK, "")
	var rc api.RegistryCredential
	_ = json.Unmarshal([]byte(raw), &rc)
	if rc.Host != "ghcr.io" || rc.Username != "bot" || !strings.HasPrefix(rc.CreatedBy, "token:") || strings.Contains(raw, "password") {
		t.Fatalf("set: %s", raw)
	}
	st, raw = b.call(t, b.owner, http.MethodPut, base+"/registry.example.com:5000", api.RegistryCredentialSetRequest{Username: "ci", Password: &pw})
	wantCall(t, st, raw, http.StatusOK, "")

	st, raw = b.call(t, b.viewer, http.MethodGet, base, nil)
	wantCall(t, st, raw, http.StatusOK, "")
	var l api.RegistryCredentialList
	_ = json.Unmarshal([]byte(raw), &l)
	if len(l.RegistryCredentials) != 2 || l.RegistryCredentials[0].Host != "ghcr.io" || l.RegistryCredentials[1].Host != "registry.example.com:5000" {
		t.Fatalf("list: %s", raw)
	}
	st, raw = b.call(t, b.viewer, http.MethodPut, base+"/ghcr.io", api.RegistryCredentialSetRequest{Username: "x", Password: &pw})
	wantCall(t, st, raw, http.StatusForbidden, "permission_denied")
	st, raw = b.call(t, b.viewer, http.MethodDelete, base+"/ghcr.io", nil)
	wantCall(t, st, raw, http.StatusForbidden, "permission_denied")

	empty := ""
	for _, tt := range []struct {
		path        string
		body        any
		code, field string
	}{
		{base + "/ghcr.io", map[string]any{"username": "bot"}, "field_required", "password"},
		{base + "/ghcr.io", api.RegistryCredentialSetRequest{Username: "bot", Password: &empty}, "registry_password_empty", "password"},
		{base + "/ghcr.io", api.RegistryCredentialSetRequest{Password: &pw}, "registry_username_invalid", "username"},
		{base + "/[::1]:5000", api.RegistryCredentialSetRequest{Username: "bot", Password: &pw}, "registry_host_invalid", "host"},
	} {
		st, raw = b.call(t, b.owner, http.MethodPut, tt.path, tt.body)
		body := wantCall(t, st, raw, http.StatusUnprocessableEntity, tt.code)
		if d, _ := body["details"].(map[string]any); d["field"] != tt.field {
			t.Fatalf("%s: %s, want field %s", tt.code, raw, tt.field)
		}
	}

	// Another team: nothing listed, nothing to delete, and its own set
	// leaves this team's account alone.
	ctx := context.Background()
	_, team2, err := service.Signup(ctx, b.st, auth.TestArgon2, service.SignupRequest{Email: "reg-other@example.com", Password: "correct horse battery", TeamName: "Others"})
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
	wantCall(t, st, raw, http.StatusOK, "")
	if !strings.Contains(raw, `"registry_credentials":[]`) {
		t.Fatalf("another team lists %s", raw)
	}
	st, raw = b.call(t, stranger, http.MethodDelete, base+"/ghcr.io", nil)
	wantCall(t, st, raw, http.StatusNotFound, "registry_credential_not_found")

	st, raw = b.call(t, b.owner, http.MethodDelete, base+"/ghcr.io", nil)
	wantCall(t, st, raw, http.StatusNoContent, "")
	st, raw = b.call(t, b.owner, http.MethodDelete, base+"/ghcr.io", nil)
	wantCall(t, st, raw, http.StatusNotFound, "registry_credential_not_found")
}
