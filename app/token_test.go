package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
)

// token makes an API token for user in team with scopes.
func (b *testBundle) token(t *testing.T, team store.Team, user store.User, role auth.Role, scopes ...auth.Scope) (store.APIToken, string) {
	t.Helper()
	tok, secret, err := service.CreateToken(context.Background(), b.store,
		service.Actor{TeamID: team.ID, UserID: user.ID, Scopes: auth.ScopesOf(role)},
		service.TokenRequest{Name: "test", Scopes: auth.Strings(scopes)}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return tok, secret
}

type apiResponse struct {
	status int
	body   map[string]any
	raw    string
}

func (b *testBundle) api(t *testing.T, secret, method, path string, body any) apiResponse {
	t.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(v)
	case []byte:
		rd = bytes.NewReader(v)
	default:
		j, _ := json.Marshal(v)
		rd = bytes.NewReader(j)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	res, err := b.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := apiResponse{status: res.StatusCode, raw: string(raw)}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			t.Fatalf("%s %s: body is not a JSON object: %s", method, path, raw)
		}
	}
	return r
}

func wantAPI(t *testing.T, r apiResponse, status int, code string) {
	t.Helper()
	if r.status != status || (code != "" && r.body["code"] != code) {
		t.Fatalf("status %d code %v, want %d %s; body %s", r.status, r.body["code"], status, code, r.raw)
	}
	if status >= 400 {
		if _, ok := r.body["details"].(map[string]any); !ok || r.body["message"] == "" {
			t.Fatalf("error body lacks message or details: %s", r.raw)
		}
	}
}

func TestToken_DashboardCreateRevoke(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.browser(t)
	br.login("owner@example.com")

	r := br.get("/tokens")
	wantStatus(t, r, http.StatusOK)
	if testid(r, "tokens-empty").Length() != 1 {
		t.Fatal("no empty state")
	}
	r = br.post("/tokens", url.Values{"name": {"CI"}, "scopes": {"apps:read", "apps:deploy"}})
	wantStatus(t, r, http.StatusCreated)
	secret := strings.TrimSpace(testid(r, "token-secret").Text())
	if !strings.HasPrefix(secret, "slw_") {
		t.Fatalf("token secret %q", secret)
	}
	me := b.api(t, secret, http.MethodGet, "/api/v1/me", nil)
	wantAPI(t, me, http.StatusOK, "")
	if me.body["user"].(map[string]any)["email"] != "owner@example.com" {
		t.Fatalf("me: %s", me.raw)
	}
	// Shown once: the list page does not carry it.
	r = br.get("/tokens")
	if strings.Contains(r.body, secret) || testid(r, "token-row").Length() != 1 {
		t.Fatal("token list shows the secret or misses the token")
	}
	id, _ := testid(r, "token-row").Attr("data-id")
	wantStatus(t, br.post("/tokens/"+id+"/revoke", nil), http.StatusSeeOther)
	wantAPI(t, b.api(t, secret, http.MethodGet, "/api/v1/me", nil), http.StatusUnauthorized, "token_invalid")
	if toks, _ := b.store.ListAPITokens(context.Background(), owner.team.ID); len(toks) != 0 {
		t.Fatal("revoked token still listed")
	}

	t.Run("bad input", func(t *testing.T) {
		r := br.post("/tokens", url.Values{"name": {""}, "scopes": {"apps:read"}})
		wantStatus(t, r, http.StatusUnprocessableEntity)
		if testid(r, "error-name").Length() != 1 {
			t.Fatal("no name error")
		}
		r = br.post("/tokens", url.Values{"name": {"x"}})
		wantStatus(t, r, http.StatusUnprocessableEntity)
		if !strings.Contains(testid(r, "error-scopes").Text(), "at least one") {
			t.Fatal("no scopes error")
		}
	})
	t.Run("a developer cannot grant scopes it lacks", func(t *testing.T) {
		dev := b.addMember(t, owner.team, "dev@example.com", store.RoleDeveloper)
		_, devSecret := b.token(t, owner.team, dev, auth.RoleDeveloper, auth.AppsRead)
		_ = devSecret
		db := b.browser(t)
		db.login("dev@example.com")
		// Developers lack tokens:manage altogether.
		wantStatus(t, db.post("/tokens", url.Values{"name": {"x"}, "scopes": {"apps:delete"}}), http.StatusForbidden)
	})
}

func TestAPI_Tokens(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	_, secret := b.token(t, owner.team, owner.user, auth.RoleOwner, auth.TokensManage, auth.AppsRead)

	r := b.api(t, secret, http.MethodPost, "/api/v1/tokens", map[string]any{"name": "ci", "scopes": []string{"apps:read"}})
	wantAPI(t, r, http.StatusCreated, "")
	newSecret, _ := r.body["token"].(string)
	newID, _ := r.body["id"].(string)
	wantAPI(t, b.api(t, newSecret, http.MethodGet, "/api/v1/applications", nil), http.StatusOK, "")

	// A token carries a subset of its creator's scopes: this one holds
	// apps:read and tokens:manage only.
	r = b.api(t, secret, http.MethodPost, "/api/v1/tokens", map[string]any{"name": "x", "scopes": []string{"apps:delete"}})
	wantAPI(t, r, http.StatusUnprocessableEntity, "scope_not_held")
	r = b.api(t, secret, http.MethodPost, "/api/v1/tokens", map[string]any{"name": "x", "scopes": []string{"apps:fly"}})
	wantAPI(t, r, http.StatusUnprocessableEntity, "scope_unknown")

	r = b.api(t, secret, http.MethodGet, "/api/v1/tokens", nil)
	wantAPI(t, r, http.StatusOK, "")
	if n := len(r.body["tokens"].([]any)); n != 2 {
		t.Fatalf("%d tokens listed, want 2", n)
	}
	wantAPI(t, b.api(t, secret, http.MethodDelete, "/api/v1/tokens/"+newID, nil), http.StatusNoContent, "")
	wantAPI(t, b.api(t, newSecret, http.MethodGet, "/api/v1/applications", nil), http.StatusUnauthorized, "token_invalid")
	wantAPI(t, b.api(t, secret, http.MethodDelete, "/api/v1/tokens/"+newID, nil), http.StatusNotFound, "not_found")
}

func TestAPI_ScopeDenied(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	_, readOnly := b.token(t, owner.team, owner.user, auth.RoleOwner, auth.AppsRead)

	r := b.api(t, readOnly, http.MethodPost, "/api/v1/applications", map[string]any{"name": "web"})
	wantAPI(t, r, http.StatusForbidden, "permission_denied")
	if r.body["details"].(map[string]any)["permission"] != "apps:write" {
		t.Fatalf("details: %s", r.raw)
	}
	wantAPI(t, b.api(t, readOnly, http.MethodGet, "/api/v1/tokens", nil), http.StatusForbidden, "permission_denied")

	t.Run("demoting the creator shrinks the token", func(t *testing.T) {
		dev := b.addMember(t, owner.team, "dev@example.com", store.RoleAdmin)
		_, s := b.token(t, owner.team, dev, auth.RoleAdmin, auth.AppsRead, auth.AppsDelete)
		if err := b.store.UpdateMemberRole(context.Background(), owner.team.ID, dev.ID, store.RoleViewer); err != nil {
			t.Fatal(err)
		}
		wantAPI(t, b.api(t, s, http.MethodDelete, "/api/v1/applications/app_x", nil), http.StatusForbidden, "permission_denied")
		if err := b.store.RemoveMember(context.Background(), owner.team.ID, dev.ID); err != nil {
			t.Fatal(err)
		}
		wantAPI(t, b.api(t, s, http.MethodGet, "/api/v1/me", nil), http.StatusUnauthorized, "token_invalid")
	})
	t.Run("no token", func(t *testing.T) {
		wantAPI(t, b.api(t, "", http.MethodGet, "/api/v1/me", nil), http.StatusUnauthorized, "token_missing")
	})
	t.Run("dashboard role denial", func(t *testing.T) {
		b.addMember(t, owner.team, "viewer@example.com", store.RoleViewer)
		br := b.browser(t)
		br.login("viewer@example.com")
		r := br.get("/applications")
		wantStatus(t, r, http.StatusOK)
		if testid(r, "application-create-form").Length() != 0 {
			t.Fatal("viewer is offered the create form")
		}
		wantStatus(t, br.post("/applications", url.Values{"name": {"web"}}), http.StatusForbidden)
	})
}

func TestAPI_Applications(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	_, s := b.token(t, owner.team, owner.user, auth.RoleOwner, auth.AllScopes...)

	r := b.api(t, s, http.MethodPost, "/api/v1/applications", map[string]any{"name": "web"})
	wantAPI(t, r, http.StatusCreated, "")
	id := r.body["id"].(string)
	wantAPI(t, b.api(t, s, http.MethodGet, "/api/v1/applications/"+id, nil), http.StatusOK, "")
	wantAPI(t, b.api(t, s, http.MethodPost, "/api/v1/applications", map[string]any{"name": "web"}), http.StatusConflict, "application_name_taken")

	tests := []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"malformed", `{"name": `, http.StatusBadRequest, "json_malformed", ""},
		{"not json", `name=web`, http.StatusBadRequest, "json_malformed", ""},
		{"empty", ``, http.StatusBadRequest, "json_malformed", ""},
		{"wrong type", `{"name": 5}`, http.StatusBadRequest, "json_type", "name"},
		{"unknown field", `{"name": "a", "nmae": "b"}`, http.StatusBadRequest, "field_unknown", "nmae"},
		{"bad name", `{"name": "Web_1"}`, http.StatusUnprocessableEntity, "name_invalid", "name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := b.api(t, s, http.MethodPost, "/api/v1/applications", tt.body)
			wantAPI(t, r, tt.status, tt.code)
			if tt.field != "" && r.body["details"].(map[string]any)["field"] != tt.field {
				t.Fatalf("details %s", r.raw)
			}
		})
	}
	t.Run("oversized body", func(t *testing.T) {
		// app.Test bypasses fasthttp's limit check, so this goes over a socket.
		// The request announces a 2 MiB body and sends none of it: the
		// server must refuse on the length alone. (Streaming the body
		// races the server closing the connection after its answer.)
		base := b.listen(t)
		conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /api/v1/applications HTTP/1.1\r\nHost: slipway\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", s, 2<<20)
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		wantAPI(t, apiResponse{status: res.StatusCode, body: body, raw: string(raw)}, http.StatusRequestEntityTooLarge, "body_too_large")
	})
	r = b.api(t, s, http.MethodGet, "/api/v1/applications", nil)
	if n := len(r.body["applications"].([]any)); n != 1 {
		t.Fatalf("%d applications after bad input, want 1: %s", n, r.raw)
	}
	wantAPI(t, b.api(t, s, http.MethodDelete, "/api/v1/applications/"+id, nil), http.StatusNoContent, "")
	wantAPI(t, b.api(t, s, http.MethodGet, "/api/v1/applications/"+id, nil), http.StatusNotFound, "not_found")
	wantAPI(t, b.api(t, s, http.MethodGet, "/api/v1/nope", nil), http.StatusNotFound, "not_found")
}
