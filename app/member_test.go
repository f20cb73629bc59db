package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/store"
)

// invite creates an invitation through the members page and returns the
// path of its link.
func invite(t *testing.T, br *browser, email, role string) string {
	t.Helper()
	br.get("/members")
	r := br.post("/members/invitations", url.Values{"email": {email}, "role": {role}})
	wantStatus(t, r, http.StatusCreated)
	link := strings.TrimSpace(testid(r, "invite-link").Find(".mono").Text())
	u, err := url.Parse(link)
	if err != nil || !strings.HasPrefix(u.Path, "/invitations/slwi_") {
		t.Fatalf("invitation link %q", link)
	}
	return u.Path
}

func TestInvitation_Accept(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	admin := b.browser(t)
	admin.login("owner@example.com")

	t.Run("new user signs up through the link", func(t *testing.T) {
		link := invite(t, admin, "dev@example.com", "developer")
		br := b.browser(t)
		r := br.get(link)
		wantStatus(t, r, http.StatusOK)
		if s := testid(r, "invitation-summary").Text(); !strings.Contains(s, "Acme") || !strings.Contains(s, "developer") {
			t.Fatalf("summary %q", s)
		}
		r = br.post(link+"/accept", url.Values{"email": {"dev@example.com"}, "password": {testPassword}})
		wantStatus(t, r, http.StatusSeeOther)
		r = br.get("/members")
		wantStatus(t, r, http.StatusOK)
		if testid(r, "current-team").Text() != "Acme" {
			t.Fatal("accepting did not switch to the team")
		}

		// Reused: the link works once.
		other := b.browser(t)
		r = other.get(link)
		wantStatus(t, r, http.StatusGone)
		if !strings.Contains(testid(r, "error-message").Text(), "already been used") {
			t.Fatalf("reused link: %q", testid(r, "error-message").Text())
		}
		r = other.post(link+"/accept", url.Values{"email": {"late@example.com"}, "password": {testPassword}})
		wantStatus(t, r, http.StatusGone)
		if _, err := b.store.GetUserByEmail(context.Background(), "late@example.com"); err == nil {
			t.Fatal("a reused invitation created a user")
		}
	})

	t.Run("existing user joins while signed in", func(t *testing.T) {
		other := b.signup(t, "other@example.com", "Other team")
		link := invite(t, admin, "other@example.com", "viewer")
		br := b.browser(t)
		br.login("other@example.com")
		r := br.post(link+"/accept", nil)
		wantStatus(t, r, http.StatusSeeOther)
		m, err := b.store.GetMember(context.Background(), owner.team.ID, other.user.ID)
		if err != nil || m.Role != store.RoleViewer {
			t.Fatalf("membership %+v, %v", m, err)
		}
		r = br.get("/applications")
		if n := testid(r, "team-switch-option").Length(); n != 2 {
			t.Fatalf("team switcher offers %d teams, want 2", n)
		}
	})

	t.Run("expired", func(t *testing.T) {
		link := invite(t, admin, "slow@example.com", "developer")
		b.clock.advance(8 * 24 * time.Hour)
		defer b.clock.advance(-8 * 24 * time.Hour)
		br := b.browser(t)
		br.get("/login")
		r := br.post(link+"/accept", url.Values{"email": {"slow@example.com"}, "password": {testPassword}})
		wantStatus(t, r, http.StatusGone)
		if !strings.Contains(testid(r, "error-message").Text(), "expired") {
			t.Fatalf("expired link: %q", testid(r, "error-message").Text())
		}
		if _, err := b.store.GetUserByEmail(context.Background(), "slow@example.com"); err == nil {
			t.Fatal("an expired invitation created a user")
		}
	})

	t.Run("bad password creates nothing", func(t *testing.T) {
		link := invite(t, admin, "weak@example.com", "developer")
		br := b.browser(t)
		br.get(link)
		r := br.post(link+"/accept", url.Values{"email": {"weak@example.com"}, "password": {"short"}})
		wantStatus(t, r, http.StatusUnprocessableEntity)
		if testid(r, "error-password").Length() != 1 {
			t.Fatal("no password error shown")
		}
		// The link still works afterwards.
		wantStatus(t, br.post(link+"/accept", url.Values{"email": {"weak@example.com"}, "password": {testPassword}}), http.StatusSeeOther)
	})

	t.Run("duplicate e-mail", func(t *testing.T) {
		link := invite(t, admin, "owner@example.com", "developer")
		br := b.browser(t)
		br.get(link)
		r := br.post(link+"/accept", url.Values{"email": {"Owner@Example.com"}, "password": {testPassword}})
		wantStatus(t, r, http.StatusUnprocessableEntity)
		if !strings.Contains(testid(r, "error-email").Text(), "exists") {
			t.Fatalf("duplicate e-mail error %q", testid(r, "error-email").Text())
		}
	})

	t.Run("bound to the invited address", func(t *testing.T) {
		link := invite(t, admin, "invited@example.com", "admin")
		// Signed in as someone else: refused, and the link still works.
		intruder := b.signup(t, "intruder@example.com", "Intruders")
		br := b.browser(t)
		br.login("intruder@example.com")
		r := br.post(link+"/accept", nil)
		wantStatus(t, r, http.StatusForbidden)
		if !strings.Contains(testid(r, "error-message").Text(), "another e-mail address") {
			t.Fatalf("mismatch page: %q", testid(r, "error-message").Text())
		}
		if _, err := b.store.GetMember(context.Background(), owner.team.ID, intruder.user.ID); err == nil {
			t.Fatal("an account with another address joined through the link")
		}
		// Signing up through the link with another address creates nothing.
		anon := b.browser(t)
		anon.get(link)
		r = anon.post(link+"/accept", url.Values{"email": {"someone-else@example.com"}, "password": {testPassword}})
		wantStatus(t, r, http.StatusUnprocessableEntity)
		if testid(r, "error-email").Length() != 1 {
			t.Fatal("no e-mail error shown")
		}
		if _, err := b.store.GetUserByEmail(context.Background(), "someone-else@example.com"); err == nil {
			t.Fatal("a mismatched sign-up created a user")
		}
		// The invited address, in another case, still joins.
		r = anon.post(link+"/accept", url.Values{"email": {"Invited@Example.com"}, "password": {testPassword}})
		wantStatus(t, r, http.StatusSeeOther)
	})

	t.Run("unknown link", func(t *testing.T) {
		wantStatus(t, b.browser(t).get("/invitations/slwi_nope"), http.StatusNotFound)
	})
}

func TestMember_RoleChange(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	dev := b.addMember(t, owner.team, "dev@example.com", store.RoleDeveloper)
	adminUser := b.addMember(t, owner.team, "admin@example.com", store.RoleAdmin)
	ctx := context.Background()

	ob := b.browser(t)
	ob.login("owner@example.com")
	wantStatus(t, ob.post("/members/"+dev.ID+"/role", url.Values{"role": {"viewer"}}), http.StatusSeeOther)
	if m, _ := b.store.GetMember(ctx, owner.team.ID, dev.ID); m.Role != store.RoleViewer {
		t.Fatalf("role %s, want viewer", m.Role)
	}

	t.Run("unknown role", func(t *testing.T) {
		r := ob.post("/members/"+dev.ID+"/role", url.Values{"role": {"god"}})
		wantStatus(t, r, http.StatusUnprocessableEntity)
		if !strings.Contains(testid(r, "form-error").Text(), "unknown role") {
			t.Fatalf("error %q", testid(r, "form-error").Text())
		}
	})
	t.Run("last owner cannot step down", func(t *testing.T) {
		r := ob.post("/members/"+owner.user.ID+"/role", url.Values{"role": {"admin"}})
		wantStatus(t, r, http.StatusUnprocessableEntity)
		if !strings.Contains(testid(r, "form-error").Text(), "at least one owner") {
			t.Fatalf("error %q", testid(r, "form-error").Text())
		}
	})
	t.Run("admin cannot make owners or touch them", func(t *testing.T) {
		ab := b.browser(t)
		ab.login("admin@example.com")
		wantStatus(t, ab.post("/members/"+dev.ID+"/role", url.Values{"role": {"owner"}}), http.StatusUnprocessableEntity)
		wantStatus(t, ab.post("/members/"+owner.user.ID+"/remove", nil), http.StatusUnprocessableEntity)
		if _, err := b.store.GetMember(ctx, owner.team.ID, owner.user.ID); err != nil {
			t.Fatal("admin removed the owner")
		}
		wantStatus(t, ab.post("/members/"+dev.ID+"/role", url.Values{"role": {"developer"}}), http.StatusSeeOther)
	})
	t.Run("developer cannot manage members", func(t *testing.T) {
		wantStatus(t, ob.post("/members/"+dev.ID+"/role", url.Values{"role": {"developer"}}), http.StatusSeeOther)
		db := b.browser(t)
		db.login("dev@example.com")
		r := db.get("/members")
		wantStatus(t, r, http.StatusOK)
		if testid(r, "invite-form").Length() != 0 || testid(r, "member-remove").Length() != 0 {
			t.Fatal("a developer is offered member controls")
		}
		wantStatus(t, db.post("/members/"+adminUser.ID+"/remove", nil), http.StatusForbidden)
	})
	t.Run("remove", func(t *testing.T) {
		wantStatus(t, ob.post("/members/"+dev.ID+"/remove", nil), http.StatusSeeOther)
		if _, err := b.store.GetMember(ctx, owner.team.ID, dev.ID); err == nil {
			t.Fatal("member still there")
		}
	})
}
