package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

// TestAccount_ChangePassword: the current password is required, the new
// one must pass the password rules, and a change signs out every other
// session (not this one), makes the old password stop working and is in
// the audit log.
func TestAccount_ChangePassword(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)
	other := b.sessionBrowser(t, owner.user)
	const next = "a much longer passphrase"

	if testid(br.get("/account"), "password-form").Length() != 1 {
		t.Fatal("the account page has no password form")
	}
	r := br.post("/account/password", url.Values{"current_password": {"wrong password!"}, "new_password": {next}})
	if r.status != http.StatusUnauthorized || !strings.Contains(testid(r, "error-current_password").Text(), "wrong") {
		t.Fatalf("wrong current password: %d", r.status)
	}
	r = br.post("/account/password", url.Values{"current_password": {testPassword}, "new_password": {"short"}})
	if r.status != http.StatusUnprocessableEntity || testid(r, "error-new_password").Length() != 1 {
		t.Fatalf("too short a new password: %d", r.status)
	}
	r = br.post("/account/password", url.Values{"current_password": {testPassword}, "new_password": {next}})
	wantStatus(t, r, http.StatusOK)
	if !strings.Contains(testid(r, "password-notice").Text(), "signed out") {
		t.Fatalf("no confirmation: %s", truncate(r.body))
	}
	wantStatus(t, br.get("/applications"), http.StatusOK)
	if r := other.get("/applications"); r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), "/login") {
		t.Fatalf("the other session still works: %d", r.status)
	}
	user, err := b.store.GetUser(context.Background(), owner.user.ID)
	if err != nil || !strings.HasPrefix(user.PasswordHash, "$argon2id$") {
		t.Fatalf("stored hash %q (%v), want argon2id", user.PasswordHash, err)
	}
	fresh := b.browser(t)
	fresh.get("/login")
	if r := fresh.post("/login", url.Values{"email": {"owner@example.com"}, "password": {testPassword}}); r.status == http.StatusSeeOther {
		t.Fatal("the old password still signs in")
	}
	if r := fresh.post("/login", url.Values{"email": {"owner@example.com"}, "password": {next}}); r.status != http.StatusSeeOther {
		t.Fatalf("the new password does not sign in: %d", r.status)
	}
	events, _ := b.store.ListEvents(context.Background(), owner.team.ID, store.EventFilter{Verb: "account.password_change"})
	if len(events) != 1 {
		t.Fatalf("%d password change events", len(events))
	}
}
