package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestSetup_FirstRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	br := b.browser(t)
	token := issueSetupToken(t, b)

	r := br.get("/")
	wantStatus(t, r, http.StatusSeeOther)
	if loc := r.header.Get("Location"); loc != "/setup" {
		t.Fatalf("empty installation redirects to %q, want /setup", loc)
	}
	r = br.get("/setup")
	wantStatus(t, r, http.StatusOK)
	if testid(r, "signup-form").Length() != 1 {
		t.Fatal("first-run page has no signup form")
	}

	r = br.post("/setup", url.Values{"email": {"owner@example.com"}, "password": {testPassword}, "team": {"Acme Inc"}, "token": {token}})
	wantStatus(t, r, http.StatusSeeOther)
	if br.cookies["slipway_session"] == "" {
		t.Fatal("signup did not start a session")
	}
	r = br.get("/applications")
	wantStatus(t, r, http.StatusOK)
	if got := testid(r, "current-team").Text(); got != "Acme Inc" {
		t.Fatalf("current team %q, want Acme Inc", got)
	}
	if testid(r, "applications-empty").Length() != 1 || !strings.Contains(testid(r, "apply-command").Text(), "slipway app apply") {
		t.Fatal("empty applications page does not explain how to create one")
	}

	// Once a user exists, first run is closed, even to a direct post.
	other := b.browser(t)
	wantStatus(t, other.get("/setup"), http.StatusSeeOther)
	other.get("/login")
	r = other.post("/setup", url.Values{"email": {"mallory@example.com"}, "password": {testPassword}, "team": {"Evil"}, "token": {token}})
	wantStatus(t, r, http.StatusSeeOther)
	if _, err := b.store.GetUserByEmail(context.Background(), "mallory@example.com"); err == nil {
		t.Fatal("a second first-run signup created a user")
	}
}

func TestSetup_BadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		form      url.Values
		field     string
		wantInMsg string
	}{
		{"short password", url.Values{"email": {"a@example.com"}, "password": {"short"}, "team": {"T"}}, "password", "at least 12"},
		{"long password", url.Values{"email": {"a@example.com"}, "password": {strings.Repeat("x", 129)}, "team": {"T"}}, "password", "at most 128 bytes"},
		{"bad email", url.Values{"email": {"not-an-email"}, "password": {testPassword}, "team": {"T"}}, "email", "e-mail address"},
		{"no team", url.Values{"email": {"a@example.com"}, "password": {testPassword}, "team": {"  "}}, "team", "team name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			br := b.browser(t)
			br.get("/setup")
			r := br.post("/setup", tt.form)
			wantStatus(t, r, http.StatusUnprocessableEntity)
			if msg := testid(r, "error-"+tt.field).Text(); !strings.Contains(msg, tt.wantInMsg) {
				t.Fatalf("error on %s = %q, want it to mention %q", tt.field, msg, tt.wantInMsg)
			}
			if n, _ := b.store.CountUsers(context.Background()); n != 0 {
				t.Fatalf("a refused signup left %d users behind", n)
			}
		})
	}
}

func TestLogin(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.signup(t, "owner@example.com", "Acme")

	t.Run("good password", func(t *testing.T) {
		br := b.browser(t)
		br.get("/login")
		r := br.post("/login", url.Values{"email": {"OWNER@example.com"}, "password": {testPassword}, "next": {"/members"}})
		wantStatus(t, r, http.StatusSeeOther)
		if loc := r.header.Get("Location"); loc != "/members" {
			t.Fatalf("login redirects to %q, want /members", loc)
		}
		r = br.get("/members")
		wantStatus(t, r, http.StatusOK)
		if testid(r, "member-row").Length() != 1 {
			t.Fatal("members page does not list the owner")
		}
	})
	t.Run("bad password", func(t *testing.T) {
		br := b.browser(t)
		br.get("/login")
		r := br.post("/login", url.Values{"email": {"owner@example.com"}, "password": {"wrong password!"}})
		wantStatus(t, r, http.StatusUnauthorized)
		if !strings.Contains(testid(r, "form-error").Text(), "wrong") {
			t.Fatalf("no error shown: %s", truncate(r.body))
		}
		if br.cookies["slipway_session"] != "" {
			t.Fatal("a failed login set a session cookie")
		}
	})
	t.Run("unknown email looks the same", func(t *testing.T) {
		br := b.browser(t)
		br.get("/login")
		r := br.post("/login", url.Values{"email": {"nobody@example.com"}, "password": {testPassword}})
		wantStatus(t, r, http.StatusUnauthorized)
	})
	t.Run("open redirect refused", func(t *testing.T) {
		br := b.browser(t)
		br.get("/login")
		r := br.post("/login", url.Values{"email": {"owner@example.com"}, "password": {testPassword}, "next": {"//evil.example/"}})
		if loc := r.header.Get("Location"); loc != "/" {
			t.Fatalf("next=//evil.example redirected to %q", loc)
		}
	})
}

func TestLogin_RateLimited(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.signup(t, "owner@example.com", "Acme")
	br := b.browser(t)
	br.get("/login")
	var last response
	for range 6 {
		last = br.post("/login", url.Values{"email": {"owner@example.com"}, "password": {"wrong password!"}})
	}
	wantStatus(t, last, http.StatusTooManyRequests)
	// Even the right password is refused until the bucket refills.
	wantStatus(t, br.post("/login", url.Values{"email": {"owner@example.com"}, "password": {testPassword}}), http.StatusTooManyRequests)
	b.clock.advance(2 * 60e9)
	wantStatus(t, br.post("/login", url.Values{"email": {"owner@example.com"}, "password": {testPassword}}), http.StatusSeeOther)
}

func TestLogout(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.signup(t, "owner@example.com", "Acme")
	br := b.browser(t)
	br.login("owner@example.com")
	cookie := br.cookies["slipway_session"]

	r := br.post("/logout", nil)
	wantStatus(t, r, http.StatusSeeOther)
	if br.cookies["slipway_session"] != "" {
		t.Fatal("logout did not clear the cookie")
	}
	// The session is gone server-side too: replaying the old cookie fails.
	br.cookies["slipway_session"] = cookie
	r = br.get("/applications")
	wantStatus(t, r, http.StatusSeeOther)
	if !strings.HasPrefix(r.header.Get("Location"), "/login") {
		t.Fatalf("old cookie still signed in: redirected to %q", r.header.Get("Location"))
	}
}

func TestCSRF_Rejected(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.signup(t, "owner@example.com", "Acme")
	br := b.browser(t)
	br.login("owner@example.com")

	tests := []struct {
		name  string
		token string
	}{
		{"missing", ""},
		{"wrong", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := br.post("/applications", url.Values{"name": {"web"}, "_csrf": {tt.token}})
			wantStatus(t, r, http.StatusForbidden)
			if code, _ := testid(r, "error-message").Attr("data-code"); code != "csrf_invalid" {
				t.Fatalf("code %q, want csrf_invalid", code)
			}
		})
	}
	if apps, _ := b.store.ListApplications(context.Background(), m.team.ID); len(apps) != 0 {
		t.Fatal("a request without a valid CSRF token created an application")
	}

	t.Run("htmx header accepted", func(t *testing.T) {
		req := newFormRequest("/applications", url.Values{"name": {"web"}})
		req.Header.Set("X-CSRF-Token", br.csrf)
		req.Header.Set("HX-Request", "true")
		r := br.do(req)
		if r.status != http.StatusNoContent || !strings.HasPrefix(r.header.Get("HX-Redirect"), "/applications/app_") {
			t.Fatalf("htmx create: status %d, HX-Redirect %q", r.status, r.header.Get("HX-Redirect"))
		}
	})
	t.Run("login form needs it too", func(t *testing.T) {
		other := b.browser(t)
		r := other.post("/login", url.Values{"email": {"owner@example.com"}, "password": {testPassword}})
		wantStatus(t, r, http.StatusForbidden)
	})
}

func newFormRequest(path string, form url.Values) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}
