package app_test

import (
	"bytes"
	"context"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/store/storetest"
)

// shopManifest is a valid manifest; replicas is the knob tests turn.
func shopManifest(replicas string) string {
	return `api_version = "slipway.dev/v1alpha1"
kind = "Application"

[metadata]
name = "shop"

[[spec.services]]
name = "web"
replicas = ` + replicas + `

[spec.services.source]
type = "image"
image = "registry.example/shop:1"
`
}

// shopWithTypo has an unknown field on line 9.
const shopWithTypo = `api_version = "slipway.dev/v1alpha1"
kind = "Application"

[metadata]
name = "shop"

[[spec.services]]
name = "web"
replicaz = 2

[spec.services.source]
type = "image"
image = "registry.example/shop:1"
`

// setupJobs is setup with a real insert-only River client, so deploys
// queue real jobs in the test's transaction.
func setupJobs(t *testing.T) *testBundle {
	t.Helper()
	st := storetest.New(t)
	rc, err := river.NewClient(riverpgxv5.New(nil), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Now()}
	a := app.New(app.Config{Store: st, Argon2: auth.TestArgon2, Now: clk.now, Jobs: rc, Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
	return &testBundle{app: a, store: st, clock: clk}
}

// htmx sends a form as htmx does (HX-Request and the CSRF header).
func (br *browser) htmx(path string, form url.Values) response {
	br.t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	req.Header.Set("X-CSRF-Token", br.csrf)
	return br.do(req)
}

func TestManifestCreate_ErrorAtLineThenRedirect(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)

	r := br.post("/manifest", url.Values{"manifest": {strings.ReplaceAll(shopWithTypo, "\n", "\r\n")}, "intent": {"save"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	errs := testid(r, "manifest-error")
	if errs.Length() != 1 {
		t.Fatalf("want 1 error, got %d:\n%s", errs.Length(), truncate(r.body))
	}
	if line, _ := errs.Attr("data-line"); line != "9" {
		t.Errorf("error at line %q, want 9", line)
	}
	if path, _ := errs.Attr("data-path"); !strings.Contains(path, "replicaz") {
		t.Errorf("error path %q does not name the field", path)
	}
	if l, _ := testid(r, "gutter-error").Attr("data-line"); l != "9" {
		t.Errorf("gutter marks line %q, want 9", l)
	}
	if got := testid(r, "manifest-input").Text(); !strings.Contains(got, "replicaz = 2") {
		t.Error("the submitted text is not kept in the editor")
	}
	if apps, _ := b.store.ListApplications(context.Background(), owner.team.ID); len(apps) != 0 {
		t.Fatal("an invalid manifest created an application")
	}

	r = br.post("/manifest", url.Values{"manifest": {shopManifest("2")}, "intent": {"save"}})
	wantStatus(t, r, http.StatusSeeOther)
	a, err := b.store.GetApplicationByName(context.Background(), owner.team.ID, "shop")
	if err != nil {
		t.Fatal(err)
	}
	if loc := r.header.Get("Location"); loc != "/applications/"+a.ID {
		t.Fatalf("redirect to %q", loc)
	}
	// The create form does not overwrite an application of the same name.
	r = br.post("/manifest", url.Values{"manifest": {shopManifest("7")}, "intent": {"save"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if code, _ := testid(r, "manifest-error").Attr("data-code"); code != "name_taken" {
		t.Fatalf("second create: code %q", code)
	}
	list := br.get("/applications")
	badge := testid(list, "environment-badge")
	if env, _ := badge.Attr("data-environment"); env != "production" {
		t.Fatalf("environment badge %q, want production", env)
	}
	if st, _ := badge.Find(`[data-testid="state-badge"]`).Attr("data-state"); st != "stopped" {
		t.Errorf("state %q, want stopped before any deployment", st)
	}
	if got := strings.TrimSpace(testid(list, "application-last-deploy").Text()); got != "never" {
		t.Errorf("last deployment %q, want never", got)
	}
}

func TestManifestCreate_Upload(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	_ = w.WriteField("_csrf", br.csrf)
	_ = w.WriteField("intent", "save")
	_ = w.WriteField("manifest", "ignored when a file is chosen")
	fw, _ := w.CreateFormFile("manifest_file", "slipway.toml")
	_, _ = fw.Write([]byte(shopManifest("1")))
	_ = w.Close()
	req := httptest.NewRequest(http.MethodPost, "/manifest", &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	wantStatus(t, br.do(req), http.StatusSeeOther)
	if _, err := b.store.GetApplicationByName(context.Background(), owner.team.ID, "shop"); err != nil {
		t.Fatalf("uploaded manifest not applied: %v", err)
	}
}

func TestManifestValidate_Partial(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)

	r := br.htmx("/manifest/validate", url.Values{"manifest": {shopWithTypo}})
	wantStatus(t, r, http.StatusOK)
	if testid(r, "topbar").Length() != 0 {
		t.Fatal("validate returned a whole page")
	}
	e := testid(r, "manifest-error")
	if line, _ := e.Attr("data-line"); e.Length() != 1 || line != "9" {
		t.Fatalf("errors %d, line %q; body %s", e.Length(), line, truncate(r.body))
	}
	if code, _ := e.Attr("data-code"); code == "" || !strings.Contains(e.Text(), code) {
		t.Errorf("error does not show its code: %q", e.Text())
	}
	if oob, _ := r.doc.Find("#manifest-gutter").Attr("hx-swap-oob"); oob != "true" {
		t.Error("gutter not swapped out of band")
	}

	r = br.htmx("/manifest/validate", url.Values{"manifest": {shopManifest("2")}})
	wantStatus(t, r, http.StatusOK)
	if testid(r, "manifest-errors").Length() != 1 || testid(r, "manifest-error").Length() != 0 {
		t.Fatalf("a valid manifest must give an empty errors region: %s", truncate(r.body))
	}
}

func TestManifestPlan_DiffAgainstSaved(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)

	// A new application plans against nothing.
	r := br.htmx("/manifest/plan", url.Values{"manifest": {shopManifest("2")}})
	wantStatus(t, r, http.StatusOK)
	if p := testid(r, "plan").Text(); !strings.Contains(p, "+ services.web") || !strings.Contains(p, "+ production") {
		t.Fatalf("plan for a new application:\n%s", p)
	}
	wantStatus(t, br.post("/manifest", url.Values{"manifest": {shopManifest("2")}, "intent": {"save"}}), http.StatusSeeOther)
	a, err := b.store.GetApplicationByName(context.Background(), owner.team.ID, "shop")
	if err != nil {
		t.Fatal(err)
	}

	form := url.Values{"manifest": {shopManifest("3")}, "application": {a.ID}, "expected_revision": {"1"}}
	r = br.htmx("/manifest/plan", form)
	wantStatus(t, r, http.StatusOK)
	if p := testid(r, "plan").Text(); !strings.Contains(p, "~ services.web.replicas: 2 -> 3") {
		t.Fatalf("plan against revision 1:\n%s", p)
	}
	if !strings.Contains(testid(r, "plan-region").Text(), "against revision 1") {
		t.Error("plan does not say what it compares with")
	}

	// Without htmx the plan comes back inside the Manifest tab.
	r = br.post("/manifest/plan", form)
	wantStatus(t, r, http.StatusOK)
	if testid(r, "tab-manifest").Length() != 1 || testid(r, "plan").Length() != 1 {
		t.Fatalf("plain-post plan is not the manifest page: %s", truncate(r.body))
	}

	// An invalid manifest has no plan, and its errors go to the editor.
	r = br.htmx("/manifest/plan", url.Values{"manifest": {shopWithTypo}, "application": {a.ID}})
	wantStatus(t, r, http.StatusOK)
	if testid(r, "plan-invalid").Length() != 1 || testid(r, "manifest-error").Length() != 1 {
		t.Fatalf("invalid plan: %s", truncate(r.body))
	}
}

func TestManifestSave_RevisionsAndDiff(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, br, a := b.ownerWithApp(t, shopManifest("1"))
	r := br.post("/manifest", url.Values{"manifest": {shopManifest("4")}, "intent": {"save"}, "application": {a.ID}, "expected_revision": {"1"}})
	wantStatus(t, r, http.StatusSeeOther)
	if loc := r.header.Get("Location"); loc != "/applications/"+a.ID+"/manifest" {
		t.Fatalf("redirect %q", loc)
	}

	// A stale editor is refused instead of overwriting revision 2.
	r = br.post("/manifest", url.Values{"manifest": {shopManifest("5")}, "intent": {"save"}, "application": {a.ID}, "expected_revision": {"1"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if !strings.Contains(testid(r, "manifest-form-error").Text(), "generation_conflict") {
		t.Fatalf("conflict not shown: %s", truncate(r.body))
	}
	// Renaming through an application's editor is refused at metadata.name.
	r = br.post("/manifest", url.Values{"manifest": {strings.Replace(shopManifest("4"), `"shop"`, `"other"`, 1)}, "intent": {"save"}, "application": {a.ID}, "expected_revision": {"2"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if p, _ := testid(r, "manifest-error").Attr("data-path"); p != "metadata.name" {
		t.Fatalf("rename error at %q", p)
	}

	r = br.get("/applications/" + a.ID + "/manifest")
	wantStatus(t, r, http.StatusOK)
	if n := testid(r, "revision-row").Length(); n != 2 {
		t.Fatalf("%d revisions listed, want 2", n)
	}
	if got := testid(r, "manifest-input").Text(); !strings.Contains(got, "replicas = 4") {
		t.Error("editor does not hold the saved source")
	}
	r = br.get("/applications/" + a.ID + "/manifest?from=1&to=2")
	if d := testid(r, "revision-diff").Text(); !strings.Contains(d, "~ services.web.replicas: 1 -> 4") {
		t.Fatalf("revision diff (status %d):\n%s\n%s", r.status, d, truncate(r.body))
	}
	wantStatus(t, br.get("/applications/"+a.ID+"/manifest?from=1&to=9"), http.StatusNotFound)
}
