package app_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestTokens_ExpiryCopyAndMeanings: a token made on the tokens page may
// expire; once it has, the API refuses it with token_expired (not the
// vaguer token_invalid) and the page marks it expired. The new secret
// comes with a copy button; the page explains each scope, and the
// members page each role.
func TestTokens_ExpiryCopyAndMeanings(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)

	r := br.get("/tokens")
	guide := testid(r, "scope-guide").Text()
	for _, want := range []string{"apps:deploy", "restart and scale", "secrets:write", "values are never shown"} {
		if !strings.Contains(guide, want) {
			t.Errorf("the scope guide lacks %q: %q", want, guide)
		}
	}
	if testid(r, "token-expiry").Find(`option[value="30"]`).Length() != 1 {
		t.Fatal("the form offers no expiry")
	}
	r = br.post("/tokens", url.Values{"name": {"ci"}, "scopes": {"apps:read"}, "expires_in_days": {"7"}})
	wantStatus(t, r, http.StatusCreated)
	secret := strings.TrimSpace(testid(r, "token-secret").Text())
	if copyBtn := testid(r, "token-copy"); copyBtn.AttrOr("data-copy", "") != "token-secret" {
		t.Fatal("the new token has no copy button")
	}
	if exp := testid(r, "token-expires").Text(); !strings.Contains(exp, b.clock.now().Add(7*24*time.Hour).UTC().Format("2006-01-02")) {
		t.Errorf("the token's expiry reads %q", exp)
	}
	wantAPI(t, b.api(t, secret, http.MethodGet, "/api/v1/me", nil), http.StatusOK, "")

	b.clock.advance(8 * 24 * time.Hour)
	wantAPI(t, b.api(t, secret, http.MethodGet, "/api/v1/me", nil), http.StatusUnauthorized, "token_expired")
	if testid(br.get("/tokens"), "token-expired").Length() != 1 {
		t.Error("the tokens page does not mark the token expired")
	}
	if r := br.post("/tokens", url.Values{"name": {"x"}, "scopes": {"apps:read"}, "expires_in_days": {"-3"}}); r.status != http.StatusUnprocessableEntity || testid(r, "error-expires_in").Length() != 1 {
		t.Errorf("a negative expiry: status %d", r.status)
	}

	roles := testid(br.get("/members"), "role-guide").Text()
	for _, want := range []string{"owner", "viewer", "change nothing"} {
		if !strings.Contains(roles, want) {
			t.Errorf("the role guide lacks %q: %q", want, roles)
		}
	}
}
