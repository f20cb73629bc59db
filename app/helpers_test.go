package app_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/notify"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// testBundle is one dashboard over a rolled-back transaction.
type testBundle struct {
	app   *fiber.App
	store *store.Store
	clock *clock
}

// clock is a settable time source so tests can expire invitations.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

const testPassword = "correct horse battery"

func setup(t *testing.T) *testBundle {
	t.Helper()
	st := storetest.New(t)
	clk := &clock{t: time.Now()}
	a := app.New(app.Config{
		Store: st, Argon2: auth.TestArgon2, Now: clk.now, Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil)),
		// The preview routes answer 503 without the machinery; with it,
		// the tenancy walk reaches their lookups.
		Previews: &service.Previews{Store: st, Limits: service.PreviewLimits{MaxPerApplication: 5, MaxTotal: 50}},
		// Secrets and registry credentials are sealed under a test key, so
		// their routes answer from their lookups (the tenancy walk).
		Secrets: secrets.New(st, testKeyring(t)),
		// Destinations seal their credentials; deliveries are recorded,
		// their jobs counted (the worker is not part of the dashboard).
		Notifications: &notify.Service{Store: st, Keyring: testKeyring(t), Emitter: &notify.Emitter{
			Enqueue: func(context.Context, *store.Store, string, string) error { return nil },
		}},
	})
	return &testBundle{app: a, store: st, clock: clk}
}

// testWriter sends the app's log to the test's log, shown on failure.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// listen serves the app on a real socket (for what app.Test bypasses) and
// returns its base URL.
func (b *testBundle) listen(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = b.app.Listener(ln) }()
	t.Cleanup(func() { _ = b.app.Shutdown() })
	return "http://" + ln.Addr().String()
}

// member is a user with a team, made through the same operation sign-up uses.
type member struct {
	user store.User
	team store.Team
}

func (b *testBundle) signup(t *testing.T, email, team string) member {
	t.Helper()
	u, tm, err := service.Signup(context.Background(), b.store, auth.TestArgon2, service.SignupRequest{Email: email, Password: testPassword, TeamName: team})
	if err != nil {
		t.Fatalf("signup %s: %v", email, err)
	}
	return member{user: u, team: tm}
}

// addMember creates a user who joins team with role.
func (b *testBundle) addMember(t *testing.T, team store.Team, email string, role store.Role) store.User {
	t.Helper()
	ctx := context.Background()
	hash, err := auth.HashPassword(auth.TestArgon2, testPassword)
	if err != nil {
		t.Fatal(err)
	}
	u, err := b.store.CreateUser(ctx, email, "", hash)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.store.AddMember(ctx, team.ID, u.ID, role); err != nil {
		t.Fatal(err)
	}
	return u
}

// ownerWithApp signs up owner@example.com with the team Acme, saves
// manifest (an application named shop) through the dashboard as them, and
// returns them, their browser and the application: how every application
// tab test starts.
func (b *testBundle) ownerWithApp(t *testing.T, manifest string) (member, *browser, store.Application) {
	t.Helper()
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)
	wantStatus(t, br.post("/manifest", url.Values{"manifest": {manifest}, "intent": {"save"}}), http.StatusSeeOther)
	a, err := b.store.GetApplicationByName(context.Background(), owner.team.ID, "shop")
	if err != nil {
		t.Fatal(err)
	}
	return owner, br, a
}

// browser keeps cookies and the last page's CSRF token, like a real one.
type browser struct {
	t       *testing.T
	app     *fiber.App
	cookies map[string]string
	csrf    string
}

func (b *testBundle) browser(t *testing.T) *browser {
	return &browser{t: t, app: b.app, cookies: map[string]string{}}
}

// response is a finished request with its body read and, for HTML, parsed.
type response struct {
	status int
	header http.Header
	body   string
	doc    *goquery.Document
}

func (br *browser) do(req *http.Request) response {
	br.t.Helper()
	for k, v := range br.cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	res, err := br.app.Test(req, -1)
	if err != nil {
		br.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	for _, c := range res.Cookies() {
		if c.MaxAge < 0 || c.Value == "" {
			delete(br.cookies, c.Name)
		} else {
			br.cookies[c.Name] = c.Value
		}
	}
	b, _ := io.ReadAll(res.Body)
	r := response{status: res.StatusCode, header: res.Header, body: string(b)}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		r.doc, err = goquery.NewDocumentFromReader(strings.NewReader(r.body))
		if err != nil {
			br.t.Fatal(err)
		}
		if tok, ok := r.doc.Find(`meta[name="csrf-token"]`).Attr("content"); ok {
			br.csrf = tok
		}
	}
	return r
}

func (br *browser) get(path string) response {
	br.t.Helper()
	return br.do(httptest.NewRequest(http.MethodGet, path, nil))
}

// post submits a form with the current CSRF token (unless form sets _csrf).
func (br *browser) post(path string, form url.Values) response {
	br.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["_csrf"]; !ok {
		form.Set("_csrf", br.csrf)
	}
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return br.do(req)
}

// login signs the browser in through the login form.
func (br *browser) login(email string) {
	br.t.Helper()
	br.get("/login")
	r := br.post("/login", url.Values{"email": {email}, "password": {testPassword}})
	if r.status != http.StatusSeeOther {
		br.t.Fatalf("login %s: status %d, body %s", email, r.status, r.body)
	}
	br.get("/applications") // pick up the session's CSRF token
}

// sessionBrowser is a browser signed in as user through a session made
// directly in the store (for tests that need many sessions without
// tripping the login rate limiter).
func (b *testBundle) sessionBrowser(t *testing.T, user store.User) *browser {
	t.Helper()
	secret := auth.NewSecret("")
	_, err := b.store.CreateSession(context.Background(), store.Session{
		ID: store.HashToken(secret), UserID: user.ID, CSRFSecret: []byte(auth.NewSecret("")), ExpiresAt: time.Now().Add(time.Hour),
	})
	if err != nil {
		t.Fatal(err)
	}
	br := b.browser(t)
	br.cookies["slipway_session"] = secret
	br.get("/account")
	return br
}

func wantStatus(t *testing.T, r response, want int) {
	t.Helper()
	if r.status != want {
		t.Fatalf("status %d, want %d; body:\n%s", r.status, want, truncate(r.body))
	}
}

func truncate(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}

// testid finds elements by data-testid.
func testid(r response, id string) *goquery.Selection {
	if r.doc == nil {
		return &goquery.Selection{}
	}
	return r.doc.Find(`[data-testid="` + id + `"]`)
}

// testKeyring is a fixed key for what the dashboard seals.
func testKeyring(t *testing.T) *keyring.Keyring {
	t.Helper()
	key, err := keyring.NewKey([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	return keyring.New(key)
}
