package app_test

import (
	"bytes"
	"context"
	"errors"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

// importSkali is a skali manifest with an image application and a database.
const importSkali = `name: shop
applications:
  web:
    image: registry.example.com/shop/web:1.2
    environment:
      DATABASE_URL: "{{databases.main.url}}"
databases:
  main:
    engine: postgres
    version: 17
`

func TestApplicationImport_Page(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)

	if href, _ := testid(br.get("/applications"), "import-link").Attr("href"); href != "/applications/import" {
		t.Fatalf("the applications page does not link to the import page (%q)", href)
	}
	r := br.get("/applications/import")
	wantStatus(t, r, http.StatusOK)
	form := testid(r, "import-form")
	if form.Length() != 1 || form.Find(`input[name="_csrf"]`).Length() != 1 {
		t.Fatalf("no CSRF-protected import form:\n%s", truncate(r.body))
	}
	for _, id := range []string{"f-from", "f-source", "f-source_file", "f-name", "f-repository", "f-domain"} {
		if r.doc.Find(`label[for="`+id+`"]`).Length() != 1 || r.doc.Find("#"+id).Length() != 1 {
			t.Errorf("control %s has no label", id)
		}
	}
	if testid(r, "import-from").Find("option").Length() != 6 || testid(r, "import-create").Length() != 1 {
		t.Fatalf("dialect choices or create button missing:\n%s", truncate(r.body))
	}

	// Translating shows the manifest and every diagnostic, and saves nothing.
	r = br.post("/applications/import", url.Values{"from": {"skali"}, "source": {strings.ReplaceAll(importSkali, "\n", "\r\n")}, "intent": {"preview"}})
	wantStatus(t, r, http.StatusOK)
	if v, _ := testid(r, "import-result").Attr("data-valid"); v != "true" || testid(r, "import-valid").Length() != 1 {
		t.Fatalf("want a valid translation:\n%s", truncate(r.body))
	}
	if !strings.Contains(testid(r, "import-manifest").Text(), "image = 'postgres:17'") {
		t.Fatalf("native manifest missing: %q", testid(r, "import-manifest").Text())
	}
	db := r.doc.Find(`[data-testid="import-diagnostic"][data-path="databases.main"]`)
	if sev, _ := db.Attr("data-severity"); sev != "warning" || !strings.Contains(db.Text(), "line 8") {
		t.Fatalf("database warning missing or without its line: %q", db.Text())
	}
	if testid(r, "import-source").Text() != importSkali {
		t.Fatalf("the form must keep the source (with LF lines) for Create: %q", testid(r, "import-source").Text())
	}
	if _, err := b.store.GetApplicationByName(context.Background(), owner.team.ID, "shop"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("translating saved the application: %v", err)
	}

	// An unfaithful translation lists its errors and is never created.
	bucket := importSkali + "buckets:\n  files:\n    visibility: private\n"
	r = br.post("/applications/import", url.Values{"from": {"skali"}, "source": {bucket}, "intent": {"create"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if sev, _ := r.doc.Find(`[data-testid="import-diagnostic"][data-path="buckets.files"]`).Attr("data-severity"); sev != "error" {
		t.Fatalf("bucket error missing:\n%s", truncate(r.body))
	}
	if !strings.Contains(testid(r, "form-error").Text(), "import_failed") {
		t.Fatalf("form error %q", testid(r, "form-error").Text())
	}

	for name, form := range map[string]url.Values{
		"empty":      {"from": {"skali"}, "source": {" "}},
		"unknown":    {"from": {"heroku"}, "source": {importSkali}},
		"undetected": {"from": {"auto"}, "source": {"hello\n"}},
	} {
		r = br.post("/applications/import", form)
		if r.status != http.StatusUnprocessableEntity || testid(r, "form-error").Length() != 1 {
			t.Errorf("%s: status %d, form error %q", name, r.status, testid(r, "form-error").Text())
		}
	}

	// Without a CSRF token nothing happens.
	r = br.post("/applications/import", url.Values{"_csrf": {"forged"}, "from": {"skali"}, "source": {importSkali}, "intent": {"create"}})
	wantStatus(t, r, http.StatusForbidden)

	// An uploaded file wins over the text, and its name drives detection.
	r = br.postImportFile("/applications/import", url.Values{"from": {"auto"}, "source": {"ignored"}, "intent": {"create"}}, "source_file", "skali.yaml", importSkali)
	wantStatus(t, r, http.StatusSeeOther)
	a, err := b.store.GetApplicationByName(context.Background(), owner.team.ID, "shop")
	if err != nil {
		t.Fatalf("create did not save the application: %v", err)
	}
	if loc := r.header.Get("Location"); loc != "/applications/"+a.ID {
		t.Fatalf("redirect to %q", loc)
	}

	// Create never replaces an existing application's manifest.
	r = br.post("/applications/import", url.Values{"from": {"skali"}, "source": {importSkali}, "intent": {"create"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if !strings.Contains(testid(r, "form-error").Text(), "application_name_taken") {
		t.Fatalf("form error %q", testid(r, "form-error").Text())
	}
	if rev, err := b.store.GetCurrentManifestRevision(context.Background(), owner.team.ID, a.ID); err != nil || rev.Revision != 1 {
		t.Fatalf("the existing application changed: revision %d, %v", rev.Revision, err)
	}

	// A Compose file, detected by its uploaded name: its published port is
	// routed on the domain.
	compose := "services:\n  web:\n    image: nginx:1.27\n    ports: [\"8080:80\"]\n"
	r = br.postImportFile("/applications/import", url.Values{"from": {"auto"}, "name": {"storefront"}, "domain": {"shop.example.com"}, "intent": {"preview"}}, "source_file", "docker-compose.yml", compose)
	wantStatus(t, r, http.StatusOK)
	if d, _ := testid(r, "import-result").Attr("data-dialect"); d != "compose" {
		t.Fatalf("want the compose dialect detected:\n%s", truncate(r.body))
	}
	if got := testid(r, "import-manifest").Text(); !strings.Contains(got, "hostname = 'shop.example.com'") || !strings.Contains(got, "name = 'storefront'") {
		t.Fatalf("the domain did not reach the importer:\n%s", got)
	}

	// A source built from its own project needs the repository options.
	built := "name: site\napplications:\n  web:\n    build:\n      context: .\n"
	r = br.post("/applications/import", url.Values{"from": {"skali"}, "source": {built}})
	if v, _ := testid(r, "import-result").Attr("data-valid"); v != "false" {
		t.Fatalf("a build without a repository must not be valid:\n%s", truncate(r.body))
	}
	r = br.post("/applications/import", url.Values{"from": {"skali"}, "source": {built},
		"repository": {"https://git.example.com/acme/site.git"}, "branch": {"release"}, "manifest_path": {"deploy/slipway.toml"}})
	got := testid(r, "import-manifest").Text()
	for _, want := range []string{"https://git.example.com/acme/site.git", "release", "deploy/slipway.toml"} {
		if !strings.Contains(got, want) {
			t.Fatalf("manifest lacks %q:\n%s", want, got)
		}
	}
}

func TestApplicationImport_Viewer(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	viewer := b.addMember(t, owner.team, "viewer@example.com", store.RoleViewer)
	br := b.sessionBrowser(t, viewer)

	r := br.get("/applications/import")
	wantStatus(t, r, http.StatusOK)
	if testid(r, "import-create").Length() != 0 {
		t.Fatal("a viewer is offered Create application")
	}
	wantStatus(t, br.post("/applications/import", url.Values{"from": {"skali"}, "source": {importSkali}}), http.StatusOK)
	wantStatus(t, br.post("/applications/import", url.Values{"from": {"skali"}, "source": {importSkali}, "intent": {"create"}}), http.StatusForbidden)
}

// postImportFile submits a multipart form with one file and the CSRF token.
func (br *browser) postImportFile(path string, form url.Values, field, filename, content string) response {
	br.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	form.Set("_csrf", br.csrf)
	for k, vs := range form {
		for _, v := range vs {
			if err := w.WriteField(k, v); err != nil {
				br.t.Fatal(err)
			}
		}
	}
	fw, err := w.CreateFormFile(field, filename)
	if err != nil {
		br.t.Fatal(err)
	}
	if _, err := fw.Write([]byte(content)); err != nil {
		br.t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		br.t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, path, &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	return br.do(req)
}
