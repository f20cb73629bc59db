package app_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/slipwayhq/slipway/store"
)

// TestEnvironments_Variables: variables are set and removed per scope
// through the service layer (each a new revision), refused edits show
// their field path and code beside the form, and htmx gets the tab back
// without a reload.
func TestEnvironments_Variables(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner, br, a := b.ownerWithApp(t, shopManifest("2"))
	tab := "/applications/" + a.ID + "/environments"
	r := br.get(tab)
	wantStatus(t, r, http.StatusOK)
	scopes := map[string]bool{}
	testid(r, "variable-scope").Each(func(_ int, s *goquery.Selection) { scopes[s.AttrOr("data-scope", "")] = true })
	for _, want := range []string{"defaults", "production", "previews"} {
		if !scopes[want] {
			t.Fatalf("scopes %v lack %s", scopes, want)
		}
	}
	if n := testid(r, "variable-set-form").Find("label").Length(); n != 3*len(scopes) {
		t.Errorf("%d labels in the variable forms, want 3 per scope", n)
	}

	// A plain form post redirects; the variable is in the next revision.
	r = br.post("/applications/"+a.ID+"/variables", url.Values{"scope": {"env:production"}, "name": {"web_replicas"}, "value": {"3"}, "type": {"integer"}, "revision": {"1"}})
	wantStatus(t, r, http.StatusSeeOther)
	r = br.get(tab)
	row := r.doc.Find(`[data-scope="production"] [data-testid="variable-row"][data-name="web_replicas"]`)
	if row.Length() != 1 || !strings.Contains(row.Text(), "3") || !strings.Contains(row.Text(), "integer") {
		t.Fatalf("production variables: %q", testid(r, "variable-scope").Text())
	}
	rev, err := b.store.GetCurrentManifestRevision(context.Background(), owner.team.ID, a.ID)
	if err != nil || rev.Revision != 2 || !strings.Contains(string(rev.Manifest), `"web_replicas": 3`) {
		t.Fatalf("revision %d %s %v", rev.Revision, rev.Manifest, err)
	}

	t.Run("htmx gets the tab with a notice", func(t *testing.T) {
		r := br.htmx("/applications/"+a.ID+"/variables", url.Values{"scope": {"previews"}, "name": {"debug"}, "value": {"true"}, "type": {"boolean"}, "revision": {"2"}})
		wantStatus(t, r, http.StatusOK)
		if testid(r, "topbar").Length() != 0 || testid(r, "environments-notice").Length() != 1 {
			t.Fatalf("htmx answer: %s", truncate(r.body))
		}
		if r.doc.Find(`[data-scope="previews"] [data-name="debug"]`).Length() != 1 {
			t.Fatal("the preview variable is not shown")
		}
	})
	t.Run("refused edits show inline", func(t *testing.T) {
		cases := []struct {
			name  string
			form  url.Values
			scope string
			want  string
		}{
			{"not an integer", url.Values{"scope": {""}, "name": {"n"}, "value": {"three"}, "type": {"integer"}}, "defaults", "not_an_integer"},
			{"no name", url.Values{"scope": {""}, "name": {" "}, "value": {"x"}}, "defaults", "required"},
			{"invalid name", url.Values{"scope": {"env:production"}, "name": {"Bad Name!"}, "value": {"x"}}, "production", "spec.environments.production.variables"},
			{"stale form", url.Values{"scope": {""}, "name": {"x"}, "value": {"1"}, "revision": {"1"}}, "defaults", "generation_conflict"},
			{"unset unknown", nil, "production", "variable_unknown"},
		}
		for _, tc := range cases {
			path := "/applications/" + a.ID + "/variables"
			if tc.form == nil {
				path += "/unset"
				tc.form = url.Values{"scope": {"env:production"}, "name": {"nope"}}
			}
			r := br.post(path, tc.form)
			wantStatus(t, r, http.StatusUnprocessableEntity)
			msg := r.doc.Find(`[data-scope="` + tc.scope + `"] [data-testid="variable-error"]`).Text()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("%s: error %q lacks %q", tc.name, msg, tc.want)
			}
		}
	})
	t.Run("remove", func(t *testing.T) {
		r := br.post("/applications/"+a.ID+"/variables/unset", url.Values{"scope": {"env:production"}, "name": {"web_replicas"}})
		wantStatus(t, r, http.StatusSeeOther)
		if br.get(tab).doc.Find(`[data-name="web_replicas"]`).Length() != 0 {
			t.Fatal("the variable is still shown")
		}
	})
	t.Run("visibility and rollback", func(t *testing.T) {
		r := br.post("/applications/"+a.ID+"/environments/production/settings", url.Values{"visibility": {"private"}, "rollback": {"manual"}})
		wantStatus(t, r, http.StatusSeeOther)
		m, _ := b.store.GetCurrentManifestRevision(context.Background(), owner.team.ID, a.ID)
		if !strings.Contains(string(m.Manifest), `"visibility": "private"`) || !strings.Contains(string(m.Manifest), `"rollback": "manual"`) {
			t.Fatalf("manifest %s", m.Manifest)
		}
		r = br.post("/applications/"+a.ID+"/environments/production/settings", url.Values{"visibility": {"secret"}})
		wantStatus(t, r, http.StatusUnprocessableEntity)
		if msg := testid(r, "environment-settings-error").Text(); !strings.Contains(msg, "visibility") {
			t.Fatalf("error %q does not name the field", msg)
		}
	})
	t.Run("a viewer sees values, not controls, and is refused", func(t *testing.T) {
		viewer := b.addMember(t, owner.team, "viewer@example.com", store.RoleViewer)
		vb := b.sessionBrowser(t, viewer)
		r := vb.get(tab)
		for _, id := range []string{"variable-set-form", "variable-unset", "environment-settings-form"} {
			if testid(r, id).Length() != 0 {
				t.Errorf("viewer is offered %s", id)
			}
		}
		if r.doc.Find(`[data-name="debug"]`).Length() != 1 {
			t.Error("viewer does not see the variables")
		}
		wantStatus(t, vb.post("/applications/"+a.ID+"/variables", url.Values{"name": {"x"}, "value": {"1"}}), http.StatusForbidden)
	})
	// The fragment path keeps the CSRF check (htmx sends the header).
	req := httptest.NewRequest(http.MethodPost, "/applications/"+a.ID+"/variables", strings.NewReader("name=x&value=1"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	wantStatus(t, br.do(req), http.StatusForbidden)
}
