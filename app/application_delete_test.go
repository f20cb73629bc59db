package app_test

import (
	"context"
	"errors"
	"net/http"
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
	hidden := func(r response, name string) []string {
		var out []string
		testid(r, "application-row").Each(func(_ int, row *goquery.Selection) {
			v, _ := row.Find(`form input[type="hidden"][name="` + name + `"]`).Attr("value")
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
	if q, st := hidden(r, "q"), r.doc.Find(`input[name="state"]`).Length(); strings.Join(q, ",") != "web,web" || st != 0 {
		t.Fatalf("the answer's delete forms carry q %v and %d state inputs, want web and none", q, st)
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
