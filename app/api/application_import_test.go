package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
)

// shopSkali is a skali manifest with an image application and a database:
// a faithful import with warnings.
const shopSkali = `name: shop
applications:
  web:
    image: registry.example.com/shop/web:1.2
    environment:
      DATABASE_URL: "{{databases.main.url}}"
    ports:
      http:
        port: 8080
databases:
  main:
    engine: postgres
    version: 17
`

// bucketSkali adds a bucket, which has no Slipway equivalent.
const bucketSkali = shopSkali + `buckets:
  files:
    visibility: private
`

func importPath(q string) string { return "/api/v1/applications/import?" + q }

func diagnostics(t *testing.T, r reply) []map[string]any {
	t.Helper()
	raw, ok := r.body["diagnostics"].([]any)
	if !ok {
		t.Fatalf("no diagnostics array: %s", r.raw)
	}
	out := make([]map[string]any, len(raw))
	for i, d := range raw {
		out[i] = d.(map[string]any)
	}
	return out
}

func TestApplicationImportTranslates(t *testing.T) {
	b := setupDeploy(t)
	// A viewer (apps:read) may translate: it saves nothing.
	r := b.do(t, b.viewer, http.MethodPost, importPath("from=skali&format=json"), "application/yaml", []byte(shopSkali))
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
	if r.body["dialect"] != "skali" || r.body["valid"] != true || r.body["format"] != "json" {
		t.Fatalf("dialect/valid/format wrong: %s", r.raw)
	}
	m, err := manifest.Decode([]byte(r.body["manifest"].(string)), "json")
	if err != nil {
		t.Fatalf("manifest does not decode: %v\n%s", err, r.body["manifest"])
	}
	if errs := manifest.Validate(m, manifest.ValidateOptions{}); len(errs) > 0 {
		t.Fatalf("manifest invalid: %v", errs)
	}
	if m.Metadata.Name != "shop" || len(m.Spec.Services) != 2 {
		t.Fatalf("want application shop with web and the database service, got %s with %d services", m.Metadata.Name, len(m.Spec.Services))
	}
	var db map[string]any
	for _, d := range diagnostics(t, r) {
		if d["path"] == "databases.main" {
			db = d
		}
	}
	if db == nil || db["severity"] != "warning" || db["line"].(float64) != 11 || !strings.Contains(db["message"].(string), "postgres:17") {
		t.Fatalf("want the database warning at line 11, got %v in %s", db, r.raw)
	}

	// Options reach the importer; TOML is the default format.
	r = b.do(t, b.viewer, http.MethodPost, importPath("from=auto&filename=skali.yaml&name=boutique"), "", []byte(shopSkali))
	if r.status != http.StatusOK || r.body["dialect"] != "skali" || r.body["format"] != "toml" {
		t.Fatalf("auto: status %d: %s", r.status, r.raw)
	}
	if !strings.Contains(r.body["manifest"].(string), "name = 'boutique'") {
		t.Fatalf("name option not applied:\n%s", r.body["manifest"])
	}

	// A Compose file: detected by its name, named after its directory, its
	// published port routed on the domain.
	compose := "services:\n  web:\n    image: nginx:1.27\n    ports: [\"8080:80\"]\n"
	r = b.do(t, b.viewer, http.MethodPost, importPath("filename=deploy/shop/compose.yaml&domain=shop.example.com"), "", []byte(compose))
	if r.status != http.StatusOK || r.body["dialect"] != "compose" {
		t.Fatalf("compose: status %d: %s", r.status, r.raw)
	}
	for _, want := range []string{"name = 'shop'", "hostname = 'shop.example.com'"} {
		if !strings.Contains(r.body["manifest"].(string), want) {
			t.Fatalf("compose manifest lacks %q:\n%s", want, r.body["manifest"])
		}
	}
}

func TestApplicationImportFailures(t *testing.T) {
	b := setupDeploy(t)
	r := b.do(t, b.viewer, http.MethodPost, importPath("from=skali"), "", []byte(bucketSkali))
	if r.status != http.StatusUnprocessableEntity || r.body["code"] != "import_failed" || r.body["valid"] != false {
		t.Fatalf("bucket: status %d: %s", r.status, r.raw)
	}
	if r.body["manifest"] == "" || r.body["dialect"] != "skali" {
		t.Fatalf("the partial manifest and dialect belong in the 422 body: %s", r.raw)
	}
	found := false
	for _, d := range diagnostics(t, r) {
		found = found || (d["severity"] == "error" && d["path"] == "buckets.files")
	}
	if !found {
		t.Fatalf("no error at buckets.files: %s", r.raw)
	}

	cases := []struct {
		name, query, body string
		status            int
		code              string
	}{
		{"unknown dialect", "from=heroku", shopSkali, http.StatusBadRequest, "import_dialect_unknown"},
		{"undetected", "from=auto", "just some text\n", http.StatusBadRequest, "import_dialect_undetected"},
		{"bad format", "from=skali&format=yaml", shopSkali, http.StatusBadRequest, "format_invalid"},
		{"empty", "from=skali", "  \n", http.StatusBadRequest, "import_empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := b.do(t, b.owner, http.MethodPost, importPath(tc.query), "", []byte(tc.body))
			if r.status != tc.status || r.body["code"] != tc.code {
				t.Fatalf("want %d %s, got %d: %s", tc.status, tc.code, r.status, r.raw)
			}
		})
	}
}

func TestApplicationImportApply(t *testing.T) {
	b := setupDeploy(t)
	r := b.do(t, b.viewer, http.MethodPost, importPath("from=skali&apply=true"), "", []byte(shopSkali))
	if r.status != http.StatusForbidden || r.body["code"] != "permission_denied" {
		t.Fatalf("viewer apply: status %d: %s", r.status, r.raw)
	}
	// An unfaithful import is never saved.
	r = b.do(t, b.owner, http.MethodPost, importPath("from=skali&apply=true"), "", []byte(bucketSkali))
	if r.status != http.StatusUnprocessableEntity || r.body["applied"] != nil {
		t.Fatalf("unfaithful apply: status %d: %s", r.status, r.raw)
	}
	if got := b.do(t, b.owner, http.MethodGet, "/api/v1/applications/shop", "", nil); got.status != http.StatusNotFound {
		t.Fatalf("unfaithful import was saved: %s", got.raw)
	}

	r = b.do(t, b.owner, http.MethodPost, importPath("from=skali&apply=true&format=json"), "", []byte(shopSkali))
	if r.status != http.StatusCreated {
		t.Fatalf("apply: status %d: %s", r.status, r.raw)
	}
	applied := r.body["applied"].(map[string]any)
	if applied["created"] != true || applied["revision"].(float64) != 1 {
		t.Fatalf("applied wrong: %s", r.raw)
	}
	got := b.do(t, b.owner, http.MethodGet, "/api/v1/applications/shop/manifest", "", nil)
	if got.status != http.StatusOK || !bytes.Contains([]byte(got.raw), []byte("postgres:17")) {
		t.Fatalf("saved manifest: status %d: %s", got.status, got.raw)
	}
	// Importing the same file again changes nothing.
	r = b.do(t, b.owner, http.MethodPost, importPath("from=skali&apply=true&format=json"), "", []byte(shopSkali))
	if r.status != http.StatusOK || r.body["applied"].(map[string]any)["unchanged"] != true {
		t.Fatalf("re-apply: status %d: %s", r.status, r.raw)
	}
	var resp struct{ Valid bool }
	if err := json.Unmarshal([]byte(r.raw), &resp); err != nil || !resp.Valid {
		t.Fatalf("re-apply body: %v %s", err, r.raw)
	}
}
