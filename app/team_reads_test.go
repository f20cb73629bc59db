package app_test

import (
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/authcache"
	"github.com/slipwayhq/slipway/store/changecache"
	"github.com/slipwayhq/slipway/store/storetest"
)

// TestTeamReads_PagesFollowEveryChange runs two dashboards over one
// database, each keeping what its applications list reads of a team while
// it listens, as two serve processes do. A change made outside both (as
// the worker makes them) shows on both once Postgres notifies it; a change
// made through one shows there at once, and on the other once notified.
func TestTeamReads_PagesFollowEveryChange(t *testing.T) {
	ctx := context.Background()
	st := storetest.NewSchema(t)
	u, team, err := service.Signup(ctx, st, auth.TestArgon2, service.SignupRequest{Email: "owner@example.com", Password: "correct horse battery", TeamName: "Kept"})
	if err != nil {
		t.Fatal(err)
	}
	shop, err := st.CreateApplication(ctx, team.ID, "shop")
	if err != nil {
		t.Fatal(err)
	}
	csrf := make([]byte, 32)
	if _, err := st.CreateSession(ctx, store.Session{ID: store.HashToken("cookie"), UserID: u.ID, CurrentTeamID: team.ID,
		CSRFSecret: csrf, ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	// Both listen only after the set-up above has committed.
	start := func() *fiber.App {
		logger := slog.New(slog.DiscardHandler)
		auths, reads := authcache.New(st, logger), changecache.New(st, store.TeamDataChannel, logger)
		storetest.RunListening(t, auths.Run, auths.Listening)
		storetest.RunListening(t, reads.Run, reads.Listening)
		return app.New(app.Config{Store: st, Argon2: auth.TestArgon2, Logger: logger, AuthCache: auths, TeamReads: reads})
	}
	health := func(f *fiber.App) string {
		t.Helper()
		res, err := f.Test(httptest.NewRequest(http.MethodGet, "/healthz", nil), -1)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return string(body)
	}
	if got := health(app.New(app.Config{Store: st, Argon2: auth.TestArgon2})); !strings.Contains(got, `"caches":"off"`) {
		t.Errorf("/healthz of a process whose caches do not listen: %s", got)
	}
	a, b := start(), start()
	if got := health(a); !strings.Contains(got, `"caches":"on"`) {
		t.Errorf("/healthz of a process whose caches listen: %s", got)
	}
	send := func(f *fiber.App, req *http.Request) (int, string) {
		t.Helper()
		req.AddCookie(&http.Cookie{Name: "slipway_session", Value: "cookie"})
		res, err := f.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	list := func(f *fiber.App) string {
		t.Helper()
		status, body := send(f, httptest.NewRequest(http.MethodGet, "/applications", nil))
		if status != http.StatusOK {
			t.Fatalf("GET /applications: %d", status)
		}
		return body
	}
	shows := func(f *fiber.App, name string) bool { return strings.Contains(list(f), ">"+name+"<") }
	for _, f := range []*fiber.App{a, b} {
		if !shows(f, "shop") {
			t.Fatal("the list does not show shop")
		}
	}

	// The pages really answer from memory: a rename Postgres does not
	// notify (its trigger off) stays unseen until a notification.
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := st.Pool().Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`ALTER TABLE applications DISABLE TRIGGER applications_team_data_changed`)
	exec(`UPDATE applications SET name = 'store' WHERE id = $1`, shop.ID)
	exec(`ALTER TABLE applications ENABLE TRIGGER applications_team_data_changed`)
	for _, f := range []*fiber.App{a, b} {
		if shows(f, "store") || !shows(f, "shop") {
			t.Fatal("a change without notification shows at once: the list is not kept")
		}
	}
	exec(`SELECT pg_notify($1, $2)`, store.TeamDataChannel, team.ID)
	for name, f := range map[string]*fiber.App{"a": a, "b": b} {
		storetest.WaitFor(t, "process "+name+" to show the notified rename", func() bool { return shows(f, "store") })
	}

	// A change as the worker makes it: through the store, outside both.
	if _, err := st.CreateApplication(ctx, team.ID, "billing"); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]*fiber.App{"a": a, "b": b} {
		storetest.WaitFor(t, "process "+name+" to show billing", func() bool { return shows(f, "billing") })
	}

	// A change through process a shows there on the next request.
	form := url.Values{"name": {"search"}, "_csrf": {base64.RawURLEncoding.EncodeToString(csrf)}}
	req := httptest.NewRequest(http.MethodPost, "/applications", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if status, body := send(a, req); status != http.StatusSeeOther && status != http.StatusFound {
		t.Fatalf("create search: %d %s", status, body)
	}
	if !shows(a, "search") {
		t.Error("the process that created search does not list it")
	}
	storetest.WaitFor(t, "process b to show search", func() bool { return shows(b, "search") })
}
