package security

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// site is the real dashboard and API over a test database, with one owner
// signed in through a session and holding an all-scopes API token.
type site struct {
	f *fiber.App
	// apiApp, when set, serves the api calls instead of f.
	apiApp  *fiber.App
	st      *store.Store
	user    store.User
	team    store.Team
	cookie  string
	csrf    string
	token   string
	scanned int
}

func newSite(t *testing.T) *site {
	t.Helper()
	st := storetest.New(t)
	return newSiteOn(t, st, app.New(app.Config{Store: st, Argon2: auth.TestArgon2, Logger: slog.New(slog.DiscardHandler)}))
}

// newSiteOn signs the owner up in st and serves f, which must be built on st.
func newSiteOn(t *testing.T, st *store.Store, f *fiber.App) *site {
	t.Helper()
	ctx := context.Background()
	s := &site{st: st, f: f}
	u, tm, err := service.Signup(ctx, st, auth.TestArgon2, service.SignupRequest{Email: "owner@example.com", Password: "correct horse battery", TeamName: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	s.user, s.team = u, tm
	s.cookie = auth.NewSecret("")
	if _, err := st.CreateSession(ctx, store.Session{ID: store.HashToken(s.cookie), UserID: u.ID, CSRFSecret: []byte(auth.NewSecret("")), ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	_, s.token, err = service.CreateToken(ctx, st, service.Actor{TeamID: tm.ID, UserID: u.ID, Scopes: auth.ScopesOf(auth.RoleOwner)},
		service.TokenRequest{Name: "security", Scopes: auth.Strings(auth.ScopesOf(auth.RoleOwner))}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s.get(t, "/account")
	return s
}

// page is a dashboard response, parsed.
type page struct {
	status int
	body   string
	doc    *goquery.Document
}

func (s *site) do(t *testing.T, req *http.Request) page {
	t.Helper()
	req.AddCookie(&http.Cookie{Name: "slipway_session", Value: s.cookie})
	res, err := s.f.Test(req, -1)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	s.scanned++
	p := page{status: res.StatusCode, body: string(b)}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		if p.doc, err = goquery.NewDocumentFromReader(strings.NewReader(p.body)); err != nil {
			t.Fatal(err)
		}
		if tok, ok := p.doc.Find(`meta[name="csrf-token"]`).Attr("content"); ok {
			s.csrf = tok
		}
	}
	return p
}

func (s *site) get(t *testing.T, path string) page {
	t.Helper()
	return s.do(t, httptest.NewRequest(http.MethodGet, path, nil))
}

// stream reads an event stream (which never ends by itself) for d over
// a real connection and returns what arrived by then.
func (s *site) stream(t *testing.T, path string, d time.Duration) (int, string) {
	t.Helper()
	ln := fasthttputil.NewInmemoryListener()
	go func() { _ = s.f.Listener(ln) }()
	defer ln.Close()
	client := &http.Client{Transport: &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) { return ln.Dial() }}}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://slipway.test"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(&http.Cookie{Name: "slipway_session", Value: s.cookie})
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body) // cut at d: what arrived is scanned
	s.scanned++
	return res.StatusCode, string(b)
}

func (s *site) post(t *testing.T, path string, form url.Values) page {
	t.Helper()
	form.Set("_csrf", s.csrf)
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return s.do(t, req)
}

// apiResult is a decoded JSON API response.
type apiResult struct {
	status int
	raw    string
	body   map[string]any
}

func (s *site) api(t *testing.T, method, path, body string) apiResult {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	f := s.f
	if s.apiApp != nil {
		f = s.apiApp
	}
	res, err := f.Test(req, -1)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	s.scanned++
	r := apiResult{status: res.StatusCode, raw: string(b)}
	_ = json.Unmarshal(b, &r.body)
	return r
}

// apiField is the field an API error names in details.field.
func (r apiResult) field() string {
	d, _ := r.body["details"].(map[string]any)
	f, _ := d["field"].(string)
	return f
}

func (r apiResult) code() string {
	c, _ := r.body["code"].(string)
	return c
}

// testid finds elements by data-testid; nothing for a non-HTML response.
func (p page) testid(id string) *goquery.Selection {
	if p.doc == nil {
		return &goquery.Selection{}
	}
	return p.doc.Find(`[data-testid="` + id + `"]`)
}
