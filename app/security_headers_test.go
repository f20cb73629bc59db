package app_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/store/storetest"
)

// TestSecurityHeaders_EveryResponse: pages, fragments, errors, the API and
// static files all carry the Content-Security-Policy (own scripts and
// styles only, no framing), X-Frame-Options, nosniff and a Referrer-Policy;
// HSTS only when the browser came over HTTPS.
func TestSecurityHeaders_EveryResponse(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)
	for _, path := range []string{"/login", "/applications", "/no-such-page", "/api/v1/applications", "/static/css/slipway.css", "/healthz"} {
		r := br.get(path)
		checkHeaders(t, path, r.header, false)
	}
	// Behind HTTPS (a TLS proxy saying so), HSTS is added.
	req := httptest.NewRequest(http.MethodGet, "/login", nil)
	req.Header.Set("X-Forwarded-Proto", "https")
	checkHeaders(t, "/login over https", br.do(req).header, true)
}

func checkHeaders(t *testing.T, what string, h http.Header, https bool) {
	t.Helper()
	csp := h.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'", "form-action 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("%s: Content-Security-Policy %q lacks %q", what, csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-") {
		t.Errorf("%s: Content-Security-Policy %q allows something unsafe", what, csp)
	}
	for name, want := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin"} {
		if got := h.Get(name); got != want {
			t.Errorf("%s: %s = %q, want %q", what, name, got, want)
		}
	}
	hsts := h.Get("Strict-Transport-Security")
	switch {
	case https && !strings.HasPrefix(hsts, "max-age=31536000"):
		t.Errorf("%s: Strict-Transport-Security = %q, want max-age=31536000", what, hsts)
	case !https && hsts != "":
		t.Errorf("%s over plain HTTP: Strict-Transport-Security = %q, want none", what, hsts)
	}
}

// TestSessionCookies_Flags: the session and pre-session CSRF cookies are
// HttpOnly and SameSite=Lax always, and Secure behind HTTPS (the request
// came over TLS, or the operator set secure_cookies for a TLS proxy);
// with secure_cookies, HSTS is sent on every response.
func TestSessionCookies_Flags(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name          string
		secureCookies bool
		forwarded     string
		wantSecure    bool
	}{
		{"plain http", false, "", false},
		{"tls proxy header", false, "https", true},
		{"secure_cookies", true, "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := storetest.New(t)
			f := app.New(app.Config{Store: st, Argon2: auth.TestArgon2, SecureCookies: tt.secureCookies, Logger: slog.New(slog.DiscardHandler)})
			b := &testBundle{app: f, store: st, clock: &clock{}}
			b.signup(t, "owner@example.com", "Acme")
			send := func(req *http.Request) *http.Response {
				if tt.forwarded != "" {
					req.Header.Set("X-Forwarded-Proto", tt.forwarded)
				}
				res, err := f.Test(req, -1)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				checkHeaders(t, tt.name+" "+req.URL.Path, res.Header, tt.wantSecure)
				return res
			}
			res := send(httptest.NewRequest(http.MethodGet, "/login", nil))
			var csrf string
			for _, c := range res.Cookies() {
				if c.Name == "slipway_csrf" {
					csrf = c.Value
				}
			}
			form := url.Values{"_csrf": {csrf}, "email": {"owner@example.com"}, "password": {testPassword}}
			req := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.AddCookie(&http.Cookie{Name: "slipway_csrf", Value: csrf})
			login := send(req)
			if login.StatusCode != http.StatusSeeOther {
				t.Fatalf("login: status %d", login.StatusCode)
			}
			seen := map[string]bool{}
			for _, c := range append(res.Cookies(), login.Cookies()...) {
				if c.Value == "" {
					continue // the pre-session cookie being cleared
				}
				seen[c.Name] = true
				if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Secure != tt.wantSecure {
					t.Errorf("cookie %s: HttpOnly=%t SameSite=%v Secure=%t; want HttpOnly, Lax, Secure=%t", c.Name, c.HttpOnly, c.SameSite, c.Secure, tt.wantSecure)
				}
			}
			if !seen["slipway_session"] || !seen["slipway_csrf"] {
				t.Fatalf("cookies seen %v; want slipway_session and slipway_csrf", seen)
			}
		})
	}
}
