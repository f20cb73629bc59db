package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// commentedShop is the shop as a person writes it, with comments.
const commentedShop = `# The shop.
api_version = "slipway.dev/v1alpha1"
kind = "Application"

[metadata]
name = "shop"

# Defaults.
[spec.variables]
web_replicas = 1 # one off-season
forgotten = "set but never referenced"

[[spec.services]]
name = "web"
replicas = "${{ vars.web_replicas }}"

[spec.services.source]
type = "image"
image = "registry.example/shop:1" # pinned

[spec.services.environment]
# Quiet by default.
LOG_LEVEL = "warn"
`

// TestVariables_TOMLDiffAndUse walks the Environments tab as the issue
// did: a variable edit keeps the TOML manifest TOML with its comments,
// the revision diff shows the value (not "declared"), unused variables are
// called out with where the others are used, and a pasted .env replaces
// a service's environment, refusing bad lines at their line.
func TestVariables_TOMLDiffAndUse(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner, br, a := b.ownerWithApp(t, commentedShop)
	ctx := context.Background()
	tab := "/applications/" + a.ID + "/environments"

	r := br.get(tab)
	wantStatus(t, r, http.StatusOK)
	if got := r.doc.Find(`[data-scope="defaults"] [data-name="forgotten"] [data-testid="variable-unused"]`).Length(); got != 1 {
		t.Errorf("the unused variable is not called out")
	}
	if got := r.doc.Find(`[data-scope="defaults"] [data-name="web_replicas"] [data-testid="variable-used-by"]`).Text(); !strings.Contains(got, "spec.services[0].replicas") {
		t.Errorf("web_replicas used by %q, want spec.services[0].replicas", got)
	}

	// Set production's own web_replicas: a plain post, redirected with a flash.
	r = br.post("/applications/"+a.ID+"/variables", url.Values{"scope": {"env:production"}, "name": {"web_replicas"}, "value": {"3"}, "type": {"integer"}, "revision": {"1"}})
	wantStatus(t, r, http.StatusSeeOther)
	r = br.get(r.header.Get("Location"))
	if msg := testid(r, "flash").Text(); !strings.Contains(msg, "revision 2") || !strings.Contains(msg, "not deployed") {
		t.Errorf("flash after the edit %q", msg)
	}
	if testid(r, "pending-environment").Length() != 1 {
		t.Errorf("production is not marked pending after the edit")
	}
	rev, err := b.store.GetCurrentManifestRevision(ctx, owner.team.ID, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := commentedShop + "\n[spec.environments.production.variables]\nweb_replicas = 3\n"
	if rev.SourceFormat != "toml" || rev.Source != want {
		t.Fatalf("saved as %s:\n%s\nwant:\n%s", rev.SourceFormat, rev.Source, want)
	}
	r = br.get("/applications/" + a.ID + "/manifest?from=1&to=2")
	if diff := testid(r, "revision-diff").Text(); !strings.Contains(diff, "environments.production.variables.web_replicas: 3") {
		t.Errorf("the revision diff does not show the value:\n%s", diff)
	}

	// A .env paste with mistakes is refused at its lines; nothing is saved.
	envURL := "/applications/" + a.ID + "/services/web/environment"
	bad := "LOG_LEVEL=info\n2FA=on\nLOG_LEVEL=debug\n"
	r = br.post(envURL, url.Values{"dotenv": {bad}, "revision": {"2"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	errs := testid(r, "service-environment-errors").Text()
	for _, w := range []string{"line 2", "env_key_invalid", "line 3", "duplicate_key"} {
		if !strings.Contains(errs, w) {
			t.Errorf("errors %q lack %q", errs, w)
		}
	}
	if got := testid(r, "service-environment-input").Text(); got != bad {
		t.Errorf("the refused text is not shown back: %q", got)
	}
	r = br.htmx(envURL, url.Values{"dotenv": {"# pasted from .env\nexport LOG_LEVEL=info\nDATABASE_HOST=\"db.internal\"\n"}, "revision": {"2"}})
	wantStatus(t, r, http.StatusOK)
	rev, err = b.store.GetCurrentManifestRevision(ctx, owner.team.ID, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rev.Revision != 3 || rev.SourceFormat != "toml" || !strings.Contains(rev.Source, "# Quiet by default.\nLOG_LEVEL = \"info\"\nDATABASE_HOST = \"db.internal\"\n") || !strings.Contains(rev.Source, "# pinned") {
		t.Fatalf("revision %d (%s) after the .env paste:\n%s", rev.Revision, rev.SourceFormat, rev.Source)
	}
}
