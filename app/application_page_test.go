package app_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

// applicationPages deploys the shop application once as owner (a finished
// deployment, so every deployment button could show) and returns the
// pages of its tabs and deployment.
func applicationPages(t *testing.T, b *testBundle, br *browser, teamID string) []string {
	t.Helper()
	appID, d := deployShop(t, b, br, teamID)
	ctx := context.Background()
	if _, err := b.store.TransitionDeployment(ctx, teamID, d.ID, []store.DeploymentState{store.StateRequested}, store.StateFailed); err != nil {
		t.Fatal(err)
	}
	// A preview, so the Previews tab has rows whose buttons could show.
	if _, err := b.store.CreateEnvironment(ctx, teamID, store.EnvironmentParams{ApplicationID: appID, Kind: store.KindPreview, Name: "shop-feat", Slug: "shop-feat", Branch: "feat"}); err != nil {
		t.Fatal(err)
	}
	// staging with a finished (restorable) deployment, and qa promoted from
	// it, so Restore and Promote could show.
	staging, err := b.store.CreateEnvironment(ctx, teamID, store.EnvironmentParams{ApplicationID: appID, Kind: store.KindEnvironment, Name: "staging", Slug: "staging"})
	if err != nil {
		t.Fatal(err)
	}
	qa, err := b.store.CreateEnvironment(ctx, teamID, store.EnvironmentParams{ApplicationID: appID, Kind: store.KindEnvironment, Name: "qa", Slug: "qa", PromoteFrom: staging.ID})
	if err != nil {
		t.Fatal(err)
	}
	built := finishBuild(t, b.store, teamID, staging)
	// A later build runs in staging now, so the first one can be restored.
	finishBuild(t, b.store, teamID, staging)
	base := "/applications/" + appID
	return []string{"/applications", base, base + "/manifest", base + "/deployments", base + "/deployments/" + d.ID, base + "/environments", base + "/events",
		base + "/previews", base + "/links", base + "/settings", "/events",
		base + "/environments/" + qa.ID + "/promote", base + "/deployments/" + built.ID, base + "/environments/staging/services/web/logs"}
}

// controls are the application pages' controls that change something.
var applicationControls = []string{"manifest-form", "manifest-save", "manifest-save-deploy", "manifest-input", "environment-deploy", "deployment-actions", "deployment-retry", "deployment-cancel",
	"variable-set-form", "variable-unset", "environment-settings-form", "preview-create-form", "preview-deploy", "preview-delete",
	"application-rename-form", "application-delete-form", "application-delete", "deployment-restore", "environment-promote", "promotion-submit",
	"environment-branch-form", "environment-delete-form", "export-set-form", "import-set-form", "exports-remove", "imports-remove",
	"service-controls", "service-restart", "service-scale"}

// TestApplicationPages_Viewer: a viewer sees every application page,
// read-only.
func TestApplicationPages_Viewer(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	pages := applicationPages(t, b, b.sessionBrowser(t, owner.user), owner.team.ID)
	viewer := b.addMember(t, owner.team, "viewer@example.com", store.RoleViewer)
	br := b.sessionBrowser(t, viewer)
	for _, path := range pages {
		r := br.get(path)
		wantStatus(t, r, http.StatusOK)
		for _, id := range applicationControls {
			if testid(r, id).Length() != 0 {
				t.Errorf("%s offers %s to a viewer", path, id)
			}
		}
	}
	r := br.get(pages[2])
	if testid(r, "manifest-source").Length() != 1 {
		t.Error("the viewer does not see the saved manifest")
	}
	// And the server refuses what the page does not offer.
	wantStatus(t, br.post("/manifest", url.Values{"manifest": {shopManifest("9")}, "intent": {"save"}}), http.StatusForbidden)
	wantStatus(t, br.post(pages[4]+"/retry", nil), http.StatusForbidden)
	for _, path := range []string{pages[1] + "/variables", pages[1] + "/variables/unset", pages[1] + "/environments/production/settings",
		pages[7] + "/shop-feat/delete", pages[7] + "/shop-feat/deploy", pages[7], pages[9] + "/rename", pages[9] + "/delete"} {
		wantStatus(t, br.post(path, url.Values{"name": {"x"}, "confirm": {"shop"}, "branch": {"main"}}), http.StatusForbidden)
	}
	// Through htmx (a form left on a page from a higher role) the refusal
	// says why in the message area, out of band, and leaves the form's
	// target alone.
	req := httptest.NewRequest(http.MethodPost, pages[1]+"/variables", strings.NewReader(url.Values{"_csrf": {br.csrf}, "name": {"x"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	r = br.do(req)
	wantStatus(t, r, http.StatusForbidden)
	flash := r.doc.Find(`#flash[hx-swap-oob] [data-testid="flash"]`).Text()
	if r.header.Get("X-Slipway-Error") != "permission_denied" || r.header.Get("HX-Reswap") != "none" || !strings.Contains(flash, "Your role (viewer) does not allow this") || strings.Contains(r.body, "<main") {
		t.Errorf("an htmx post refused to a viewer answers X-Slipway-Error %q, HX-Reswap %q, flash %q:\n%s", r.header.Get("X-Slipway-Error"), r.header.Get("HX-Reswap"), flash, truncate(r.body))
	}
}

// TestApplicationPages_Developer is the counterpart: a developer gets the
// controls (so the viewer test cannot pass because they vanished).
func TestApplicationPages_Developer(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	pages := applicationPages(t, b, b.sessionBrowser(t, owner.user), owner.team.ID)
	dev := b.addMember(t, owner.team, "dev@example.com", store.RoleDeveloper)
	br := b.sessionBrowser(t, dev)
	want := map[string][]string{
		pages[0]:  {"manifest-form", "manifest-save-deploy", "environment-badge"},
		pages[1]:  {"overview-environment", "overview-deployment", "service-restart", "service-scale"},
		pages[2]:  {"manifest-form", "manifest-input", "manifest-save", "manifest-save-deploy", "manifest-plan", "revision-row"},
		pages[3]:  {"deployment-row"},
		pages[4]:  {"deployment-timeline", "deployment-retry"},
		pages[5]:  {"environment-deploy", "variable-set-form", "environment-settings-form", "environment-promote"},
		pages[6]:  {"event-row", "event-filter"},
		pages[7]:  {"preview-row"},
		pages[8]:  {"exports-empty", "imports-empty", "export-set-form", "import-set-form"},
		pages[9]:  {"application-rename-form", "settings-repository"},
		pages[10]: {"team-event-row", "team-event-filter"},
		pages[11]: {"promotion-plan", "promotion-submit"},
		pages[12]: {"deployment-actions", "deployment-restore"},
		pages[13]: {"service-logs"},
	}
	for path, ids := range want {
		r := br.get(path)
		wantStatus(t, r, http.StatusOK)
		for _, id := range ids {
			if testid(r, id).Length() == 0 {
				t.Errorf("%s lacks %s", path, id)
			}
		}
	}
	// The Overview names who deployed: the owner by email.
	if got := testid(br.get(pages[1]), "overview-deployment").Text(); !strings.Contains(got, "by owner@example.com") {
		t.Errorf("the Overview's deployments say %q, want one by owner@example.com", strings.Join(strings.Fields(got), " "))
	}
}
