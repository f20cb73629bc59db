package app_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/authcache"
	"github.com/slipwayhq/slipway/store/storetest"
)

// TestAuthCache_RevocationReachesEveryProcess runs two dashboards over one
// database, each with its own running auth cache, as two serve processes
// are. A token both have cached is refused by the one that revoked it at
// once, and by the other as soon as Postgres's notification arrives.
func TestAuthCache_RevocationReachesEveryProcess(t *testing.T) {
	ctx := context.Background()
	st := storetest.NewSchema(t)
	start := func() *fiber.App {
		cache := authcache.New(st, slog.New(slog.DiscardHandler))
		storetest.RunListening(t, cache.Run, cache.Listening)
		return app.New(app.Config{Store: st, Argon2: auth.TestArgon2, Logger: slog.New(slog.DiscardHandler), AuthCache: cache})
	}

	u, team, err := service.Signup(ctx, st, auth.TestArgon2, service.SignupRequest{Email: "owner@example.com", Password: "correct horse battery", TeamName: "Cached"})
	if err != nil {
		t.Fatal(err)
	}
	token := func(name string) (store.APIToken, string) {
		tok, secret, err := service.CreateToken(ctx, st, service.Actor{TeamID: team.ID, UserID: u.ID, Scopes: auth.AllScopes},
			service.TokenRequest{Name: name, Scopes: auth.Strings(auth.AllScopes)}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return tok, secret
	}
	status := func(f *fiber.App, method, path, secret string) int {
		t.Helper()
		req := httptest.NewRequest(method, path, nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		res, err := f.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	list := func(f *fiber.App, secret string) int {
		return status(f, http.MethodGet, "/api/v1/applications", secret)
	}
	_, admin := token("admin")
	quiet, quietSecret := token("quiet")
	// The processes start listening after the set-up above has committed,
	// so no notification of it can arrive late and empty a cache below.
	a, b := start(), start()

	// The caches really answer: a revocation Postgres does not notify (its
	// trigger off) leaves both processes accepting the token they keep.
	for _, f := range []*fiber.App{a, b} {
		if got := list(f, quietSecret); got != http.StatusOK {
			t.Fatalf("fresh token: %d", got)
		}
	}
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := st.Pool().Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`ALTER TABLE api_tokens DISABLE TRIGGER api_tokens_auth_changed`)
	exec(`UPDATE api_tokens SET revoked_at = now() WHERE id = $1`, quiet.ID)
	exec(`ALTER TABLE api_tokens ENABLE TRIGGER api_tokens_auth_changed`)
	for _, f := range []*fiber.App{a, b} {
		if got := list(f, quietSecret); got != http.StatusOK {
			t.Fatalf("a token revoked without notification was refused (%d): the cache is not answering", got)
		}
	}
	exec(`SELECT pg_notify($1, '')`, store.AuthChannel)
	for name, f := range map[string]*fiber.App{"a": a, "b": b} {
		storetest.WaitFor(t, "process "+name+" to refuse the token after the notification", func() bool { return list(f, quietSecret) == http.StatusUnauthorized })
	}

	// A revocation through the API: refused by the process that made it
	// from the very next request, and by the other once notified.
	ci, ciSecret := token("ci")
	for _, f := range []*fiber.App{a, b} {
		if got := list(f, ciSecret); got != http.StatusOK {
			t.Fatalf("fresh token: %d", got)
		}
	}
	if got := status(a, http.MethodDelete, "/api/v1/tokens/"+ci.ID, admin); got != http.StatusNoContent {
		t.Fatalf("revoke: %d", got)
	}
	if got := list(a, ciSecret); got != http.StatusUnauthorized {
		t.Errorf("the process that revoked the token answered %d for it", got)
	}
	storetest.WaitFor(t, "process b to refuse the revoked token", func() bool { return list(b, ciSecret) == http.StatusUnauthorized })
}
