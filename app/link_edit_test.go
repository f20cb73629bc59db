package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

// TestLinks_Edit: exports and imports are added and removed from the
// Links tab as manifest revisions (with the form's revision checked), a
// refusal shows its field path and code, and a viewer gets no forms and
// 403.
func TestLinks_Edit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	owner, br, a := b.ownerWithApp(t, shopManifest("1"))
	tab := "/applications/" + a.ID + "/links"
	r := br.get(tab)
	wantStatus(t, r, http.StatusOK)
	if testid(r, "export-set-form").Length() != 1 || testid(r, "import-set-form").Length() != 1 {
		t.Fatalf("an owner has no link forms: %s", truncate(r.body))
	}

	wantStatus(t, br.post(tab+"/exports", url.Values{"service": {"web"}, "applications": {"billing, crm"}, "previews": {"true"}, "revision": {"1"}}), http.StatusSeeOther)
	r = br.htmx(tab+"/imports", url.Values{"application": {"billing"}, "service": {"db"}, "environment": {"production"}, "revision": {"2"}})
	wantStatus(t, r, http.StatusOK)
	if !strings.Contains(testid(r, "links-notice").Text(), "revision 3") {
		t.Fatalf("htmx import: %s", truncate(r.body))
	}
	r = br.get(tab)
	if row := r.doc.Find(`[data-testid="export-row"][data-service="web"]`); !strings.Contains(row.Text(), "billing") || !strings.Contains(row.Text(), "crm") || !strings.Contains(row.Text(), "allowed") {
		t.Fatalf("export row %q", row.Text())
	}
	if r.doc.Find(`[data-testid="import-row"][data-application="billing"][data-service="db"]`).Length() != 1 {
		t.Fatal("the import is not listed")
	}
	rev, err := b.store.GetCurrentManifestRevision(ctx, owner.team.ID, a.ID)
	if err != nil || rev.Revision != 3 || !strings.Contains(string(rev.Manifest), `"crm"`) || !strings.Contains(string(rev.Manifest), `"db"`) {
		t.Fatalf("revision %d %s (%v)", rev.Revision, rev.Manifest, err)
	}

	refusals := []struct {
		name string
		path string
		form url.Values
		id   string
		want string
	}{
		{"stale form", "/exports", url.Values{"service": {"web"}, "applications": {"crm"}, "revision": {"1"}}, "exports-error", "expected_revision: revision 3 was saved since revision 1: reload, merge and save again (generation_conflict)"},
		{"unknown service", "/exports", url.Values{"service": {"nope"}, "applications": {"crm"}, "revision": {"3"}}, "exports-error", "spec.exports"},
		{"remove unknown", "/imports/remove", url.Values{"application": {"billing"}, "service": {"cache"}, "revision": {"3"}}, "imports-error", "(import_unknown)"},
	}
	for _, tc := range refusals {
		r := br.post(tab+tc.path, tc.form)
		wantStatus(t, r, http.StatusUnprocessableEntity)
		if got := testid(r, tc.id).Text(); !strings.Contains(got, tc.want) {
			t.Errorf("%s: error %q, want %q", tc.name, got, tc.want)
		}
	}
	wantStatus(t, br.post(tab+"/exports/remove", url.Values{"service": {"web"}, "_csrf": {""}}), http.StatusForbidden)

	viewer := b.addMember(t, owner.team, "viewer@example.com", store.RoleViewer)
	vb := b.sessionBrowser(t, viewer)
	r = vb.get(tab)
	if testid(r, "export-set-form").Length()+testid(r, "import-set-form").Length()+testid(r, "exports-remove").Length() != 0 {
		t.Fatal("a viewer sees link forms")
	}
	wantStatus(t, vb.post(tab+"/exports/remove", url.Values{"service": {"web"}}), http.StatusForbidden)

	wantStatus(t, br.post(tab+"/exports/remove", url.Values{"service": {"web"}, "revision": {"3"}}), http.StatusSeeOther)
	wantStatus(t, br.post(tab+"/imports/remove", url.Values{"application": {"billing"}, "service": {"db"}, "revision": {"4"}}), http.StatusSeeOther)
	r = br.get(tab)
	if testid(r, "exports-empty").Length() != 1 || testid(r, "imports-empty").Length() != 1 {
		t.Fatalf("links left after removing them: %s", truncate(r.body))
	}
	if rev, err := b.store.GetCurrentManifestRevision(ctx, owner.team.ID, a.ID); err != nil || rev.Revision != 5 {
		t.Fatalf("revision %d (%v), want 5", rev.Revision, err)
	}
}
