package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

// TestPreviews_NotEnvironmentsInTheDashboard: the environment actions of
// the dashboard answer 404 for a preview, and retrying a preview's
// deployment redeploys the preview (preview deploy), not an environment,
// as its confirmation says.
func TestPreviews_NotEnvironmentsInTheDashboard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupJobs(t)
	owner, br, a := b.ownerWithApp(t, shopManifest("1")+`
[spec.manifest]
path = "slipway.toml"
repository = { url = "https://git.example.com/shop.git", branch = "main" }
`)
	pv, err := b.store.CreateEnvironment(ctx, owner.team.ID, store.EnvironmentParams{
		ApplicationID: a.ID, Kind: store.KindPreview, Name: "shop-feat-x-abc123", Slug: "shop-feat-x-abc123", Branch: "feat/x",
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := b.store.CreateDeployment(ctx, owner.team.ID, store.DeploymentParams{EnvironmentID: pv.ID, Revision: 1, Origin: store.OriginBuild, Actor: "github"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.FailDeployment(ctx, owner.team.ID, d.ID, "build_failed", "failed by the test"); err != nil {
		t.Fatal(err)
	}
	base := "/applications/" + a.ID + "/environments/"
	br.get("/applications/" + a.ID + "/environments") // a page for the CSRF token
	wantStatus(t, br.post(base+pv.ID+"/deploy", nil), http.StatusNotFound)
	wantStatus(t, br.get(base+pv.ID+"/promote"), http.StatusNotFound)
	wantStatus(t, br.post(base+pv.ID+"/promote", nil), http.StatusNotFound)
	if ds, err := b.store.ListDeployments(ctx, owner.team.ID, store.DeploymentFilter{EnvironmentID: pv.ID}); err != nil || len(ds) != 1 {
		t.Fatalf("preview has %d deployments (%v) after the environment actions, want 1", len(ds), err)
	}

	path := "/applications/" + a.ID + "/deployments/" + d.ID
	confirm, _ := br.get(path).doc.Find(`form:has([data-testid="deployment-retry"])`).Attr("hx-confirm")
	if !strings.Contains(confirm, "head of branch feat/x") || strings.Contains(confirm, "saved manifest") {
		t.Fatalf("retry confirmation %q, want the preview's branch head, not the saved manifest", confirm)
	}
	r := br.post(path+"/retry", nil)
	wantStatus(t, r, http.StatusSeeOther)
	ds, err := b.store.ListDeployments(ctx, owner.team.ID, store.DeploymentFilter{EnvironmentID: pv.ID})
	if err != nil || len(ds) != 2 || !strings.HasSuffix(r.header.Get("Location"), ds[0].ID) {
		t.Fatalf("retry redirected to %q; preview deployments %+v (%v), want a new one", r.header.Get("Location"), ds, err)
	}
	events, err := b.store.ListEvents(ctx, owner.team.ID, store.EventFilter{ObjectType: "deployment", ObjectID: ds[0].ID})
	if err != nil || len(events) != 1 {
		t.Fatalf("events of the retried preview deployment %+v (%v), want one request", events, err)
	}
	var details map[string]any
	if err := json.Unmarshal(events[0].Details, &details); err != nil || details["preview"] != true || details["branch"] != "feat/x" {
		t.Fatalf("retry requested %s (%v), want a deployment of the preview's branch", events[0].Details, err)
	}
}
