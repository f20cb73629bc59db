package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

const linkedManifest = `api_version = "slipway.dev/v1alpha1"
kind = "Application"

[metadata]
name = "shop"

[[spec.services]]
name = "web"

[spec.services.source]
type = "image"
image = "registry.example/shop:1"

[[spec.exports]]
service = "web"
applications = ["billing", "search"]

[[spec.imports]]
application = "auth"
service = "api"
environment = "production"
`

// TestLinks_ShowsExportsAndImports: the Links tab shows what the saved
// manifest declares, and says what to do when it declares nothing.
func TestLinks_ShowsExportsAndImports(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, br, a := b.ownerWithApp(t, shopManifest("1"))
	tab := "/applications/" + a.ID + "/links"
	r := br.get(tab)
	wantStatus(t, r, http.StatusOK)
	if testid(r, "exports-empty").Length() != 1 || testid(r, "imports-empty").Length() != 1 {
		t.Fatal("no empty states without links")
	}
	if cur, _ := testid(r, "tab-links").Attr("aria-current"); cur != "page" {
		t.Error("the Links tab is not marked current")
	}
	r = br.post("/manifest", url.Values{"manifest": {linkedManifest}, "intent": {"save"}, "application": {a.ID}, "expected_revision": {"1"}})
	wantStatus(t, r, http.StatusSeeOther)
	r = br.get(tab)
	exp := r.doc.Find(`[data-testid="export-row"][data-service="web"]`)
	if exp.Length() != 1 || !strings.Contains(exp.Text(), "billing") || !strings.Contains(exp.Text(), "search") {
		t.Fatalf("export row %q", exp.Text())
	}
	imp := r.doc.Find(`[data-testid="import-row"][data-application="auth"][data-service="api"]`)
	if imp.Length() != 1 || !strings.Contains(imp.Text(), "production") {
		t.Fatalf("import row %q", imp.Text())
	}
}

// TestSettings_RenameAndTypedDelete: renaming goes through the service
// (errors inline), deleting needs the name typed, and a viewer gets
// neither control.
func TestSettings_RenameAndTypedDelete(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	ctx := context.Background()
	owner, br, a := b.ownerWithApp(t, shopManifest("1"))
	tab := "/applications/" + a.ID + "/settings"
	r := br.get(tab)
	wantStatus(t, r, http.StatusOK)
	for _, id := range []string{"application-rename-form", "application-delete-form", "repository-none"} {
		if testid(r, id).Length() != 1 {
			t.Fatalf("settings lack %s", id)
		}
	}
	if testid(r, "application-delete-form").Find(`label[for="delete-confirm"]`).Length() != 1 {
		t.Error("the confirmation input has no label")
	}

	viewer := b.addMember(t, owner.team, "viewer@example.com", store.RoleViewer)
	vb := b.sessionBrowser(t, viewer)
	vr := vb.get(tab)
	wantStatus(t, vr, http.StatusOK)
	for _, id := range []string{"application-rename-form", "application-delete-form"} {
		if testid(vr, id).Length() != 0 {
			t.Errorf("viewer is offered %s", id)
		}
	}
	wantStatus(t, vb.post(tab+"/delete", url.Values{"confirm": {"shop"}}), http.StatusForbidden)
	wantStatus(t, vb.post(tab+"/rename", url.Values{"name": {"store"}}), http.StatusForbidden)

	r = br.post(tab+"/rename", url.Values{"name": {"Not A Name"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if msg := testid(r, "application-rename-error").Text(); !strings.Contains(msg, "name") {
		t.Fatalf("rename error %q", msg)
	}
	if v, _ := r.doc.Find("#app-name").Attr("value"); v != "Not A Name" {
		t.Errorf("the refused name is not kept in the input: %q", v)
	}
	wantStatus(t, br.post(tab+"/rename", url.Values{"name": {"store"}, "revision": {"1"}}), http.StatusSeeOther)
	if got, _ := b.store.GetApplication(ctx, owner.team.ID, a.ID); got.Name != "store" {
		t.Fatalf("name %q after rename", got.Name)
	}

	r = br.post(tab+"/delete", url.Values{"confirm": {"shop"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if msg := testid(r, "application-delete-error").Text(); !strings.Contains(msg, "confirmation_mismatch") {
		t.Fatalf("delete error %q", msg)
	}
	wantStatus(t, br.post(tab+"/delete", url.Values{"confirm": {"store"}}), http.StatusSeeOther)
	if _, err := b.store.GetApplication(ctx, owner.team.ID, a.ID); err == nil {
		t.Fatal("the application is still there")
	}
}
