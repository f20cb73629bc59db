package app_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/gofiber/fiber/v2"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/forge/github/githubtest"
	"github.com/slipwayhq/slipway/notify"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
	"github.com/slipwayhq/slipway/test/headless"
	"github.com/slipwayhq/slipway/test/summary"
)

// cspManifest gives the application's pages something on every tab:
// environments, a route, a volume, a generated secret, a job, previews.
const cspManifest = `api_version = "slipway.dev/v1alpha1"
kind = "Application"

[metadata]
name = "shop"

[spec.environments.staging]

[spec.environments.production]

[spec.previews]
visibility = "private"

[[spec.volumes]]
name = "data"

[[spec.secrets]]
name = "session-key"
generate = { type = "random", bytes = 32 }

[[spec.services]]
name = "web"
replicas = 2

[spec.services.source]
type = "image"
image = "registry.example/shop:1"

[[spec.services.mounts]]
volume = "data"
target = "/data"

[[spec.services.secrets]]
name = "session-key"
target = "/run/secrets/session-key"

[spec.services.resources]
cpu_millis = 250
memory_bytes = 67108864

[[spec.jobs]]
name = "migrate"
service = "web"
command = ["/app", "migrate"]

[[spec.routes]]
hostname = "${{ env.name }}.shop.example.com"
service = "web"
port = 8080
`

// cspControlPath is a page the test adds that breaks the policy on
// purpose (an inline script, an inline style attribute, a <style>), so
// the walk is shown to notice a violation.
const cspControlPath = "/csp-control-page"

// TestCSP_EveryPageInChromium loads every GET page of the dashboard in
// headless Chromium, signed in as the owner of a team with an application
// on every tab, and fails on any Content-Security-Policy violation (the
// securitypolicyviolation event, and the console's "Refused to ..."
// messages) or script error. A page added later is walked automatically;
// one whose path parameter the walker cannot fill fails the test until a
// filler is added here. A control page that inlines a script and styles
// must be caught, or the walk proves nothing.
func TestCSP_EveryPageInChromium(t *testing.T) {
	headless.Need(t)
	t.Parallel()
	ctx := context.Background()
	st := storetest.NewSchema(t)
	fake := githubtest.New(t)
	kr := testKeyring(t)
	ghCfg := fake.Config()
	rc, err := river.NewClient(riverpgxv5.New(nil), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	f := app.New(app.Config{
		Store: st, Argon2: auth.TestArgon2, Jobs: rc, Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil)),
		Secrets:  secrets.New(st, kr),
		Previews: &service.Previews{Store: st, Limits: service.PreviewLimits{MaxPerApplication: 5, MaxTotal: 50}},
		Notifications: &notify.Service{Store: st, Keyring: kr, Emitter: &notify.Emitter{
			Enqueue: func(context.Context, *store.Store, string, string) error { return nil },
		}},
		GitHub: &app.GitHub{
			Source:   &github.Source{Store: st, Sealer: kr, Static: &ghCfg, Options: github.Options{Retry: github.RetryPolicy{BaseDelay: time.Millisecond}}},
			StateKey: kr.DeriveKey("test/github-states"), PublicURL: "https://slipway.test",
		},
	})
	f.Get(cspControlPath, func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
		return c.SendString(`<!doctype html><html><head><style>p{color:red}</style></head><body><p style="color:blue">x</p><script>document.title="ran"</script></body></html>`)
	})
	b := &testBundle{app: f, store: st, clock: &clock{t: time.Now()}}

	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)
	if r := br.post("/manifest", url.Values{"manifest": {cspManifest}, "intent": {"deploy"}}); r.status != http.StatusSeeOther {
		t.Fatalf("save and deploy: status %d: %s", r.status, r.doc.Find(`[role="alert"], .field-error, [data-testid$="error"]`).Text())
	}
	a, err := st.GetApplicationByName(ctx, owner.team.ID, "shop")
	if err != nil {
		t.Fatal(err)
	}
	deps, err := st.ListDeployments(ctx, owner.team.ID, store.DeploymentFilter{})
	if err != nil || len(deps) == 0 {
		t.Fatalf("deployments after save and deploy: %d %v", len(deps), err)
	}
	preview, err := st.CreateEnvironment(ctx, owner.team.ID, store.EnvironmentParams{
		ApplicationID: a.ID, Kind: store.KindPreview, Name: "feature-x", Slug: "feature-x", Branch: "feature-x",
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := secrets.New(st, kr).Set(ctx, owner.team.ID, a.ID, "api-key", []byte("value"), "user:"+owner.user.ID); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, br.post("/tokens", url.Values{"name": {"ci"}, "scopes": {"apps:read"}}), http.StatusCreated)
	invSecret := auth.NewSecret(auth.InvitationPrefix)
	if _, err := st.CreateInvitation(ctx, owner.team.ID, store.InvitationParams{
		Email: "new@example.com", Role: store.RoleDeveloper, TokenHash: store.HashToken(invSecret),
		InvitedBy: owner.user.ID, ExpiresAt: time.Now().Add(time.Hour),
	}); err != nil {
		t.Fatal(err)
	}
	env, err := st.GetEnvironmentByName(ctx, owner.team.ID, a.ID, "production")
	if err != nil {
		t.Fatal(err)
	}
	dest, err := st.CreateNotificationDestination(ctx, owner.team.ID, store.NotificationDestinationParams{
		Name: "ops", Kind: "slack", Events: []string{"deployment.failed"}, UnhealthyMinutes: 5,
		Settings: []byte(`{"host":"hooks.example.com"}`), Enabled: true,
		Seal: func(string) (store.Sealed, error) {
			return store.Sealed{KeyID: "k", Nonce: []byte("n"), Ciphertext: []byte("c")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	fillers := map[string]string{
		"app":         a.ID,
		"deployment":  deps[0].ID,
		"environment": env.ID,
		"service":     "web",
		"slug":        preview.Slug,
		"secret":      invSecret, // the invitation link
		"destination": dest.ID,
	}
	var paths []string
	seen := map[string]bool{}
	for _, rt := range f.GetRoutes(true) {
		if rt.Method != http.MethodGet || seen[rt.Path] || !dashboardPage(rt.Path) {
			continue
		}
		seen[rt.Path] = true
		path, err := fillPath(rt.Path, fillers)
		if err != nil {
			t.Fatalf("GET %s: %v (add a filler in TestCSP_EveryPageInChromium)", rt.Path, err)
		}
		paths = append(paths, path)
	}
	sort.Strings(paths)
	if len(paths) < 20 {
		t.Fatalf("only %d pages to walk; the route registry looks wrong", len(paths))
	}
	base := b.listen(t)

	bctx, cancel := headless.Start(t, nil)
	defer cancel()
	w := &violations{}
	if err := chromedp.Listen(bctx, w.record); err != nil {
		t.Fatal(err)
	}
	// Reported to the page, whatever the console says: the event carries
	// the directive and what was blocked.
	const listener = `document.addEventListener("securitypolicyviolation", e => console.error("CSP violation: " + e.violatedDirective + " blocked " + (e.blockedURI || "inline") + " at " + e.sourceFile + ":" + e.lineNumber));`
	if _, err := chromedp.Call(bctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: listener}); err != nil {
		t.Fatal(err)
	}
	load := func(path string) []string {
		t.Helper()
		for attempt := 1; ; attempt++ {
			w.reset()
			err := loadPage(bctx, base+path)
			if err == nil {
				return w.take()
			}
			// On a starved machine the evaluation can reach the document
			// the navigation replaced; that page is loaded again.
			if attempt == 3 || !strings.Contains(err.Error(), "Cannot find context with specified id") {
				t.Fatalf("load %s: %v", path, err)
			}
		}
	}

	// The control first: the walk must see each kind of violation.
	got := load(cspControlPath)
	for _, want := range []string{"script-src", "style-src"} {
		if !containsAny(got, want) {
			t.Fatalf("the control page's inline %s was not reported; the walk cannot see violations (got %q)", want, got)
		}
	}

	if err := chromedp.Do(bctx, chromedp.Navigate(base+"/login"),
		chromedp.Evaluate[chromedp.Void](`document.cookie = "slipway_session=`+br.cookies["slipway_session"]+`; path=/"`)); err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		if bad := load(path); len(bad) > 0 {
			t.Errorf("GET %s in Chromium:\n  %s", path, strings.Join(bad, "\n  "))
		}
	}

	// htmx swaps too: typing into the manifest editor validates through
	// htmx and swaps the result in under the same policy.
	w.reset()
	tctx, cancel2 := context.WithTimeout(bctx, time.Minute)
	defer cancel2()
	if err := chromedp.Do(tctx,
		chromedp.Navigate(base+"/applications/"+a.ID+"/manifest"),
		chromedp.WaitVisible(chromedp.CSS(`#f-manifest`)),
		chromedp.SetValue(chromedp.CSS(`#f-manifest`), strings.Replace(cspManifest, "replicas = 2", "replicaz = 2", 1)),
		chromedp.SendKeys(chromedp.CSS(`#f-manifest`), " "),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="manifest-error"]`)),
	); err != nil {
		t.Fatalf("manifest editor in Chromium: %v", err)
	}
	if bad := w.take(); len(bad) > 0 {
		t.Errorf("manifest editor's htmx validation:\n  %s", strings.Join(bad, "\n  "))
	}
	if !t.Failed() {
		summary.Line(t, "csp: %d dashboard pages and an htmx swap loaded in Chromium under the policy, 0 violations (the inline control was caught)", len(paths))
	}
}

// dashboardPage says whether a GET route renders a dashboard page (not the
// API, static files, probes, or hooks).
func dashboardPage(path string) bool {
	for _, p := range []string{"/api/", "/static", "/healthz", "/metrics", "/webhooks/", cspControlPath} {
		if strings.HasPrefix(path, p) {
			return false
		}
	}
	return !strings.HasSuffix(path, "/download") // a file, not a page
}

// loadPage navigates to url and returns once the page is complete, htmx
// has run its start-up (where it would inline its indicator styles) and
// any violation event has been queued.
func loadPage(bctx context.Context, url string) error {
	tctx, cancel := context.WithTimeout(bctx, time.Minute)
	defer cancel()
	return chromedp.Do(tctx,
		chromedp.Navigate(url),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Poll[bool](`document.readyState === "complete"`)(ctx, tg)
			return err
		}),
		chromedp.Evaluate[chromedp.Void](`new Promise(r => setTimeout(r, 0))`, chromedp.EvalAwaitPromise),
	)
}

// violations collects what the page reports: CSP violations (the
// listener's console.error, and Chromium's own "Refused to ..." log
// entries), uncaught exceptions and console errors.
type violations struct {
	mu  sync.Mutex
	got []string
}

func (v *violations) record(ev any) {
	var msg string
	switch e := ev.(type) {
	case *log.EventEntryAdded:
		// A 4xx page is a network "error"; the page it shows is checked
		// like any other.
		if e.Entry.Source != log.EntrySourceNetwork && (e.Entry.Level == log.EntryLevelError || strings.Contains(e.Entry.Text, "Content Security Policy")) {
			msg = fmt.Sprintf("log %s: %s (%s)", e.Entry.Source, e.Entry.Text, e.Entry.URL)
		}
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError {
			var parts []string
			for _, a := range e.Args {
				parts = append(parts, strings.Trim(string(a.Value), `"`))
			}
			msg = "console.error: " + strings.Join(parts, " ")
		}
	case *runtime.EventExceptionThrown:
		msg = "exception: " + e.ExceptionDetails.Text
		if e.ExceptionDetails.Exception != nil {
			msg += " " + e.ExceptionDetails.Exception.Description
		}
	}
	if msg == "" || strings.Contains(msg, "favicon.ico") {
		return
	}
	v.mu.Lock()
	v.got = append(v.got, msg)
	v.mu.Unlock()
}

func (v *violations) reset() { v.mu.Lock(); v.got = nil; v.mu.Unlock() }

func (v *violations) take() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := v.got
	v.got = nil
	return out
}

func containsAny(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
