package app_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/slipwayhq/slipway/store"
)

// TestApplication_DeleteRefusedWhileDeploying: the dashboard refuses to
// delete an application with a deployment requested or running, naming
// it and the code, and keeps the application.
func TestApplication_DeleteRefusedWhileDeploying(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)
	ctx := context.Background()

	wantStatus(t, br.post("/applications", url.Values{"name": {"web"}}), http.StatusSeeOther)
	a, err := b.store.GetApplicationByName(ctx, owner.team.ID, "web")
	if err != nil {
		t.Fatal(err)
	}
	env, err := b.store.CreateEnvironment(ctx, owner.team.ID, store.EnvironmentParams{ApplicationID: a.ID, Kind: store.KindEnvironment, Name: "production", Slug: "production"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := b.store.CreateDeployment(ctx, owner.team.ID, store.DeploymentParams{EnvironmentID: env.ID, Revision: 1, Origin: store.OriginBuild, Actor: "user:test"})
	if err != nil {
		t.Fatal(err)
	}

	r := br.post("/applications/"+a.ID+"/delete", url.Values{"confirm": {"web"}})
	wantStatus(t, r, http.StatusConflict)
	if msg := testid(r, "error-message").Text(); !strings.Contains(msg, d.ID) || !strings.Contains(msg, "deployment_in_progress") {
		t.Fatalf("refusal %q does not name the deployment and the code", msg)
	}
	if _, err := b.store.GetApplication(ctx, owner.team.ID, a.ID); err != nil {
		t.Fatalf("the application was deleted: %v", err)
	}
	// The deletion once the deployment has finished is
	// app/service TestDeleteApplication_RefusedWhileDeploying (this server
	// has no job queue to take the teardowns).
}

// TestApplication_DeleteKeepsFilter: the delete buttons of a filtered
// list carry its search and state filter, so the htmx answer is the same
// filtered list without the deleted application, and a plain post
// redirects back to it.
func TestApplication_DeleteKeepsFilter(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)
	ctx := context.Background()
	apps := map[string]store.Application{}
	for _, name := range []string{"web-api", "web-admin", "webshop", "billing"} {
		a, err := b.store.CreateApplication(ctx, owner.team.ID, name)
		if err != nil {
			t.Fatal(err)
		}
		apps[name] = a
	}
	// web-api is deploying (its deployment stays requested); web-admin's
	// deployment failed.
	for _, name := range []string{"web-api", "web-admin"} {
		env, err := b.store.CreateEnvironment(ctx, owner.team.ID, store.EnvironmentParams{ApplicationID: apps[name].ID, Kind: store.KindEnvironment, Name: "production", Slug: "production"})
		if err != nil {
			t.Fatal(err)
		}
		d, err := b.store.CreateDeployment(ctx, owner.team.ID, store.DeploymentParams{EnvironmentID: env.ID, Revision: 1, Origin: store.OriginBuild, Actor: "user:test"})
		if err != nil {
			t.Fatal(err)
		}
		if name == "web-admin" {
			if _, err := b.store.TransitionDeployment(ctx, owner.team.ID, d.ID, []store.DeploymentState{store.StateRequested}, store.StateFailed); err != nil {
				t.Fatal(err)
			}
		}
	}
	names := func(r response) string {
		var out []string
		for _, n := range testid(r, "application-link").Nodes {
			out = append(out, strings.TrimSpace(n.FirstChild.Data))
		}
		return strings.Join(out, ",")
	}
	// Each row's Delete… loads its delete form with the list's filter; the
	// form carries it on.
	hidden := func(r response, name string) []string {
		var out []string
		testid(r, "application-delete-open").Each(func(_ int, d *goquery.Selection) {
			u, _ := d.Attr("hx-get")
			req := httptest.NewRequest(http.MethodGet, u, nil)
			req.Header.Set("HX-Request", "true")
			form := br.do(req)
			wantStatus(t, form, http.StatusOK)
			v, _ := testid(form, "application-delete-form").Find(`input[type="hidden"][name="` + name + `"]`).Attr("value")
			out = append(out, v)
		})
		return out
	}

	r := br.get("/applications?q=web&state=failed")
	wantStatus(t, r, http.StatusOK)
	if got := names(r); got != "web-admin" {
		t.Fatalf("q=web&state=failed listed %q", got)
	}
	if q, st := hidden(r, "q"), hidden(r, "state"); strings.Join(q, ",") != "web" || strings.Join(st, ",") != "failed" {
		t.Fatalf("delete form carries q %v state %v, want web and failed", q, st)
	}

	// Filtered by name only: the answer keeps the search.
	r = br.htmx("/applications/"+apps["webshop"].ID+"/delete", url.Values{"q": {"web"}, "confirm": {"webshop"}})
	wantStatus(t, r, http.StatusOK)
	if got := names(r); got != "web-admin,web-api" {
		t.Fatalf("delete from q=web answered with %q, want web-admin,web-api", got)
	}
	if q, st := hidden(r, "q"), hidden(r, "state"); strings.Join(q, ",") != "web,web" || strings.Join(st, ",") != "," {
		t.Fatalf("the answer's delete forms carry q %v and state %v, want web and none", q, st)
	}

	// Filtered by name and state: the answer is the filtered list, here
	// empty, saying what it was filtered by.
	r = br.htmx("/applications/"+apps["web-admin"].ID+"/delete", url.Values{"q": {"web"}, "state": {"failed"}, "confirm": {"web-admin"}})
	wantStatus(t, r, http.StatusOK)
	if got := names(r); got != "" || !strings.Contains(testid(r, "applications-no-match").Text(), "failed") {
		t.Fatalf("delete from q=web&state=failed answered with %q: %s", got, truncate(r.body))
	}

	// A plain post redirects to the filtered list; an unknown state is
	// dropped as the list drops it.
	r = br.post("/applications/"+apps["billing"].ID+"/delete", url.Values{"q": {"bill"}, "state": {"bogus"}, "confirm": {"billing"}})
	wantStatus(t, r, http.StatusSeeOther)
	if loc := r.header.Get("Location"); loc != "/applications?q=bill" {
		t.Errorf("plain delete redirected to %q, want /applications?q=bill", loc)
	}
	for _, name := range []string{"webshop", "web-admin", "billing"} {
		if _, err := b.store.GetApplication(ctx, owner.team.ID, apps[name].ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s after its deletion: %v, want not found", name, err)
		}
	}
}

// TestApplication_DeleteFormLoadsOnOpen: the list carries no delete form
// per row, only a Delete… link that htmx answers with the typed-name form
// in a disclosure and that, without JavaScript, leads to the Settings
// page's delete (guarded by the same typed name). A viewer gets neither.
func TestApplication_DeleteFormLoadsOnOpen(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)
	a, err := b.store.CreateApplication(context.Background(), owner.team.ID, "web")
	if err != nil {
		t.Fatal(err)
	}

	r := br.get("/applications")
	wantStatus(t, r, http.StatusOK)
	if n := r.doc.Find(`form[action$="/delete"], input[name="confirm"]`).Length(); n != 0 {
		t.Fatalf("the list carries %d delete forms or fields; it should load them on demand", n)
	}
	open := testid(r, "application-delete-open")
	if get, _ := open.Attr("hx-get"); get != "/applications/"+a.ID+"/delete" {
		t.Fatalf("Delete… loads %q", get)
	}
	href, _ := open.Attr("href")
	if href != "/applications/"+a.ID+"/settings#delete" {
		t.Fatalf("without JavaScript Delete… leads to %q, want the Settings page's delete", href)
	}
	if testid(br.get(href), "settings-delete").AttrOr("id", "") != "delete" {
		t.Fatal("the Settings page's delete section is not the #delete the list links to")
	}

	req := httptest.NewRequest(http.MethodGet, "/applications/"+a.ID+"/delete", nil)
	req.Header.Set("HX-Request", "true")
	r = br.do(req)
	wantStatus(t, r, http.StatusOK)
	form := testid(r, "application-delete-disclosure").Find(`[data-testid="application-delete-form"]`)
	if action, _ := form.Attr("action"); action != "/applications/"+a.ID+"/delete" || !strings.Contains(form.Find(`label[for="delete-`+a.ID+`"]`).Text(), "Type web to confirm") {
		t.Fatalf("the loaded form posts to %q and reads %q", action, form.Text())
	}
	if form.Find(`input[name="_csrf"]`).Length() != 1 {
		t.Fatal("the loaded form has no CSRF token")
	}
	r = br.get("/applications/" + a.ID + "/delete")
	wantStatus(t, r, http.StatusSeeOther)
	if loc := r.header.Get("Location"); loc != "/applications/"+a.ID+"/settings#delete" {
		t.Errorf("a plain GET redirected to %q, want the Settings page's delete", loc)
	}

	vb := b.sessionBrowser(t, b.addMember(t, owner.team, "viewer@example.com", store.RoleViewer))
	if testid(vb.get("/applications"), "application-delete-open").Length() != 0 {
		t.Error("a viewer is offered Delete…")
	}
	wantStatus(t, vb.get("/applications/"+a.ID+"/delete"), http.StatusForbidden)
}
