package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

// TestPreviews_ListAndDelete: the tab lists the application's previews
// (not its environments) with branch, state and latest deployment; an
// owner deletes one after confirming, a viewer gets no control.
func TestPreviews_ListAndDelete(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	ctx := context.Background()
	owner, br, a := b.ownerWithApp(t, shopManifest("1"))
	tab := "/applications/" + a.ID + "/previews"
	r := br.get(tab)
	wantStatus(t, r, http.StatusOK)
	if testid(r, "previews-empty").Length() != 1 || testid(r, "preview-create-form").Length() != 0 {
		t.Fatal("an application without previews (and a server without the preview service) shows no empty state, or a create form")
	}
	for _, p := range []struct{ slug, branch string }{{"shop-feature-a", "feature/a"}, {"shop-fix-b", "fix/b"}} {
		env, err := b.store.CreateEnvironment(ctx, owner.team.ID, store.EnvironmentParams{ApplicationID: a.ID, Kind: store.KindPreview, Name: p.slug, Slug: p.slug, Branch: p.branch})
		if err != nil {
			t.Fatal(err)
		}
		if p.slug == "shop-fix-b" {
			if _, err := b.store.CreateDeployment(ctx, owner.team.ID, store.DeploymentParams{EnvironmentID: env.ID, Revision: 1, Origin: store.OriginBuild, Actor: "github"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	r = br.get(tab)
	rows := testid(r, "preview-row")
	if rows.Length() != 2 {
		t.Fatalf("%d preview rows, want 2 (production is no preview)", rows.Length())
	}
	// The manifest sets no [spec.previews] visibility: previews are private.
	if v := testid(r, "previews-visibility"); v.AttrOr("data-visibility", "") != "private" || !strings.Contains(v.Text(), "tailnet") {
		t.Fatalf("previews visibility %q (%q), want private", v.AttrOr("data-visibility", ""), v.Text())
	}
	// Previews are no environments: the Environments tab leaves them out.
	envs := br.get("/applications/" + a.ID + "/environments")
	if n := testid(envs, "environment-row").Length(); n != 1 || envs.doc.Find(`[data-environment="shop-fix-b"]`).Length() != 0 {
		t.Fatalf("environments tab: %d rows, or lists a preview", n)
	}
	fix := r.doc.Find(`[data-testid="preview-row"][data-slug="shop-fix-b"]`)
	if !strings.Contains(fix.Text(), "fix/b") || fix.Find(`[data-testid="state-badge"]`).AttrOr("data-state", "") != "deploying" || fix.Find(`[data-testid="preview-deployment"]`).Length() != 1 {
		t.Fatalf("fix/b row: %q", fix.Text())
	}
	feature := r.doc.Find(`[data-testid="preview-row"][data-slug="shop-feature-a"]`)
	if feature.Find(`[data-testid="state-badge"]`).AttrOr("data-state", "") != "stopped" || !strings.Contains(feature.Text(), "never deployed") {
		t.Fatalf("feature/a row: %q", feature.Text())
	}
	del := feature.Find(`[data-testid="preview-delete"]`).Closest("form")
	if confirm, _ := del.Attr("hx-confirm"); !strings.Contains(confirm, "shop-feature-a") || del.Find(`input[name="_csrf"]`).Length() != 1 {
		t.Fatalf("delete form confirm %q / CSRF missing", confirm)
	}

	viewer := b.addMember(t, owner.team, "viewer@example.com", store.RoleViewer)
	vb := b.sessionBrowser(t, viewer)
	vr := vb.get(tab)
	if testid(vr, "preview-row").Length() != 2 || testid(vr, "preview-delete").Length() != 0 {
		t.Fatal("the viewer does not see the previews, or is offered delete")
	}
	wantStatus(t, vb.post(tab+"/shop-feature-a/delete", nil), http.StatusForbidden)

	// A preview with a deployment waiting is refused inline, then the idle one goes.
	r = br.post(tab+"/shop-fix-b/delete", nil)
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if msg := r.doc.Find(`[data-slug="shop-fix-b"] [data-testid="preview-error"]`).Text(); !strings.Contains(msg, "application_busy") {
		t.Fatalf("busy preview error %q", msg)
	}
	wantStatus(t, br.post(tab+"/shop-feature-a/delete", nil), http.StatusSeeOther)
	if r := br.get(tab); r.doc.Find(`[data-slug="shop-feature-a"]`).Length() != 0 || testid(r, "preview-row").Length() != 1 {
		t.Fatal("the deleted preview is still listed")
	}
	wantStatus(t, br.post(tab+"/production/delete", nil), http.StatusNotFound)
}
