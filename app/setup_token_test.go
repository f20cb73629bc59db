package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
)

// issueSetupToken issues the installation's setup token, as serve does at
// its first start.
func issueSetupToken(t *testing.T, b *testBundle) string {
	t.Helper()
	token, err := service.IssueSetupToken(context.Background(), b.store)
	if err != nil || !strings.HasPrefix(token, auth.SetupPrefix) {
		t.Fatalf("issue setup token: %q %v", token, err)
	}
	return token
}

// TestSetup_NeedsTheToken: the first-run form creates nobody without the
// setup token serve printed, or with a wrong one (403, setup_token_invalid
// on the token field); with it, the owner is created, and the token is
// then spent: it no longer matches and a second first run is refused.
func TestSetup_NeedsTheToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	token := issueSetupToken(t, b)
	if again, err := service.IssueSetupToken(ctx, b.store); err != nil || again != "" {
		t.Fatalf("a second issue returned %q %v; the first token must stay the one", again, err)
	}
	form := func(tok string) url.Values {
		return url.Values{"email": {"owner@example.com"}, "password": {testPassword}, "team": {"Acme"}, "token": {tok}}
	}
	for _, tt := range []struct{ name, token string }{
		{"no token", ""},
		{"wrong token", auth.NewSecret(auth.SetupPrefix)},
		{"token with a character changed", token[:len(token)-1] + string('A'+(token[len(token)-1]+1)%26)},
		{"an API token", auth.NewSecret(auth.TokenPrefix)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			br := b.browser(t)
			br.get("/setup")
			r := br.post("/setup", form(tt.token))
			wantStatus(t, r, http.StatusForbidden)
			if msg := testid(r, "error-token").Text(); !strings.Contains(msg, service.CodeSetupTokenInvalid) {
				t.Fatalf("error on token = %q, want %s", msg, service.CodeSetupTokenInvalid)
			}
			if n, _ := b.store.CountUsers(ctx); n != 0 {
				t.Fatalf("a first run with %s created %d users", tt.name, n)
			}
		})
	}
	// A setup link fills the token in.
	br := b.browser(t)
	r := br.get("/setup?token=" + url.QueryEscape(token))
	if v, _ := r.doc.Find(`input[name="token"]`).Attr("value"); v != token {
		t.Fatalf("setup link: token field %q, want the link's token", v)
	}
	wantStatus(t, br.post("/setup", form(token)), http.StatusSeeOther)
	if ok, err := service.SetupTokenValid(ctx, b.store, token); err != nil || ok {
		t.Fatalf("the setup token still matches after the owner was created: %t %v", ok, err)
	}
	other := b.browser(t)
	other.get("/login")
	wantStatus(t, other.post("/setup", url.Values{"email": {"mallory@example.com"}, "password": {testPassword}, "team": {"Evil"}, "token": {token}}), http.StatusSeeOther)
	if _, err := b.store.GetUserByEmail(ctx, "mallory@example.com"); err == nil {
		t.Fatal("the spent token created a second owner")
	}
}

// TestSetup_RateLimited: token guesses are limited per address like
// logins; once the bucket is empty even the right token waits.
func TestSetup_RateLimited(t *testing.T) {
	t.Parallel()
	b := setup(t)
	token := issueSetupToken(t, b)
	br := b.browser(t)
	br.get("/setup")
	form := func(tok string) url.Values {
		return url.Values{"email": {"owner@example.com"}, "password": {testPassword}, "team": {"Acme"}, "token": {tok}}
	}
	var last response
	for range 6 {
		last = br.post("/setup", form(auth.NewSecret(auth.SetupPrefix)))
	}
	wantStatus(t, last, http.StatusTooManyRequests)
	wantStatus(t, br.post("/setup", form(token)), http.StatusTooManyRequests)
	b.clock.advance(2 * 60e9)
	wantStatus(t, br.post("/setup", form(token)), http.StatusSeeOther)
}

// TestSetup_CreateOwnerRetiresTheToken: the operator's create-owner (the
// admin command's service) needs no token, and afterwards the token no
// longer opens the first-run form.
func TestSetup_CreateOwnerRetiresTheToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	token := issueSetupToken(t, b)
	if _, _, err := service.CreateOwner(ctx, b.store, auth.TestArgon2, service.SignupRequest{Email: "ops@example.com", Password: testPassword, TeamName: "Ops"}); err != nil {
		t.Fatal(err)
	}
	br := b.browser(t)
	wantStatus(t, br.get("/setup"), http.StatusSeeOther)
	br.get("/login")
	wantStatus(t, br.post("/setup", url.Values{"email": {"late@example.com"}, "password": {testPassword}, "team": {"Late"}, "token": {token}}), http.StatusSeeOther)
	if _, _, err := service.Signup(ctx, b.store, auth.TestArgon2, service.SignupRequest{Email: "late@example.com", Password: testPassword, TeamName: "Late", FirstRun: true, SetupToken: token}); err != service.ErrSetupDone {
		t.Fatalf("first run after create-owner: %v, want ErrSetupDone", err)
	}
	if ok, _ := service.SetupTokenValid(ctx, b.store, token); ok {
		t.Fatal("create-owner left the setup token valid")
	}
}
