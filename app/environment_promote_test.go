package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

// finishBuild records a succeeded build deployment of env as the worker
// would: the current revision captured and rendered for it with its spec
// hash, one image prepared.
func finishBuild(t *testing.T, st *store.Store, teamID string, env store.Environment) store.Deployment {
	t.Helper()
	ctx := context.Background()
	rev, err := st.GetCurrentManifestRevision(ctx, teamID, env.ApplicationID)
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Decode(rev.Manifest, "json")
	if err != nil {
		t.Fatal(err)
	}
	rendered, errs := manifest.Render(m, manifest.RenderContext{Environment: env.Name, Slug: env.Slug})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	renderedJSON, _ := json.Marshal(rendered)
	hash, err := manifest.SpecHash(rendered, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := st.CreateDeployment(ctx, teamID, store.DeploymentParams{EnvironmentID: env.ID, Revision: rev.Revision, Origin: store.OriginBuild})
	if err != nil {
		t.Fatal(err)
	}
	for _, to := range []store.DeploymentState{store.StateCapturing, store.StatePreparing, store.StateRollingOut, store.StateSucceeded} {
		if to == store.StatePreparing {
			if _, err := st.RecordCapture(ctx, teamID, d.ID, store.Capture{Manifest: rev.Manifest, Rendered: renderedJSON, Variables: []byte(`{}`), SpecHash: hash}); err != nil {
				t.Fatal(err)
			}
			if err := st.SetDeploymentSteps(ctx, teamID, d.ID, []byte(`[{"name":"prepare","state":"succeeded","detail":{"web":"example.com/shop:1"}}]`)); err != nil {
				t.Fatal(err)
			}
		}
		if d, err = st.TransitionDeployment(ctx, teamID, d.ID, []store.DeploymentState{d.State}, to); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func TestEnvironments_PromotePlanAndPromote(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	ctx := context.Background()
	m := shopManifest("1") + `
[spec.environments.staging]

[spec.environments.production]
promote_from = "staging"
`
	owner, br, a := b.ownerWithApp(t, m)
	r := br.get("/applications/" + a.ID + "/environments")
	link, ok := r.doc.Find(`[data-environment="production"] [data-testid="environment-promote"]`).Attr("href")
	if !ok || r.doc.Find(`[data-environment="staging"] [data-testid="environment-promote"]`).Length() != 0 {
		t.Fatal("only the promoted environment offers Promote")
	}
	r = br.get(link)
	wantStatus(t, r, http.StatusOK)
	if !strings.Contains(testid(r, "promotion-problems").Text(), "promotion_source_not_ready") || testid(r, "promotion-submit").Length() != 0 {
		t.Fatalf("plan without a source deployment: %s", truncate(r.body))
	}

	staging, err := b.store.GetEnvironmentByName(ctx, owner.team.ID, a.ID, "staging")
	if err != nil {
		t.Fatal(err)
	}
	built := finishBuild(t, b.store, owner.team.ID, staging)
	r = br.get(link)
	wantStatus(t, r, http.StatusOK)
	// The plan names the source's revision and the image by name, not
	// the deployment id and digest.
	if href, _ := testid(r, "promotion-source").Attr("href"); !strings.HasSuffix(href, built.ID) || testid(r, "promotion-source").Text() != "revision 1" || testid(r, "promotion-changes").Length() != 1 {
		t.Fatalf("plan: %s", truncate(r.body))
	}
	if summary := testid(r, "promotion-summary").Text(); !strings.Contains(summary, "staging") || strings.Contains(summary, "dep_") {
		t.Errorf("plan summary %q", summary)
	}
	reviewed, _ := testid(r, "promotion-plan").Parent().Find(`input[name="deployment_id"]`).Attr("value")
	if reviewed != built.ID {
		t.Fatalf("the form promotes %q, the plan showed %s", reviewed, built.ID)
	}

	// The source moves on after the review: promoting what was reviewed is refused.
	newer := finishBuild(t, b.store, owner.team.ID, staging)
	r = br.post(link, url.Values{"deployment_id": {reviewed}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if !strings.Contains(testid(r, "promotion-error").Text(), "promotion_source_changed") {
		t.Fatalf("stale promotion: %s", truncate(r.body))
	}
	current, _ := testid(r, "promotion-plan").Parent().Find(`input[name="deployment_id"]`).Attr("value")
	if current != newer.ID {
		t.Fatalf("after the refusal the form promotes %q, the source's current deployment is %s", current, newer.ID)
	}
	r = br.post(link, url.Values{"deployment_id": {current}})
	wantStatus(t, r, http.StatusSeeOther)
	loc := r.header.Get("Location")
	id := loc[strings.LastIndex(loc, "/")+1:]
	d, err := b.store.GetDeployment(ctx, owner.team.ID, id)
	if err != nil || d.Origin != store.OriginPromotion || d.PromotedFrom != current {
		t.Fatalf("promotion deployment %+v, %v", d, err)
	}
}

// TestEnvironments_SetUpPromotion: promotion is offered without editing
// promote_from by hand. A declared environment gets promote_from in its
// block (a TOML revision keeping the comments); an undeclared one stores
// it, as env source does.
func TestEnvironments_SetUpPromotion(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	ctx := context.Background()
	m := shopManifest("1") + `
# Staging first, then production.
[spec.environments.staging]

[spec.environments.production]
visibility = "public" # for now
`
	owner, br, a := b.ownerWithApp(t, m)
	r := br.get("/applications/" + a.ID + "/environments")
	link, ok := r.doc.Find(`[data-environment="production"] [data-testid="environment-promote-setup"]`).Attr("href")
	if !ok {
		t.Fatalf("production offers no promotion: %s", truncate(r.body))
	}
	r = br.get(link)
	wantStatus(t, r, http.StatusOK)
	if got := testid(r, "promotion-source-select").Find("option").Text(); got != "staging" {
		t.Fatalf("sources offered %q, want staging", got)
	}
	r = br.post(link+"-from", url.Values{"promote_from": {"staging"}, "revision": {"1"}})
	wantStatus(t, r, http.StatusSeeOther)
	r = br.get(r.header.Get("Location"))
	if msg := testid(r, "flash").Text(); !strings.Contains(msg, "saved as revision 2") || testid(r, "promotion-plan").Length() != 1 {
		t.Fatalf("after setting the source: flash %q\n%s", msg, truncate(r.body))
	}
	rev, err := b.store.GetCurrentManifestRevision(ctx, owner.team.ID, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rev.SourceFormat != "toml" || !strings.Contains(rev.Source, "[spec.environments.production]\nvisibility = \"public\" # for now\npromote_from = \"staging\"\n") || !strings.Contains(rev.Source, "# Staging first") {
		t.Fatalf("revision 2 (%s):\n%s", rev.SourceFormat, rev.Source)
	}
	prod, err := b.store.GetEnvironmentByName(ctx, owner.team.ID, a.ID, "production")
	staging, _ := b.store.GetEnvironmentByName(ctx, owner.team.ID, a.ID, "staging")
	if err != nil || prod.PromoteFrom != staging.ID {
		t.Fatalf("production promotes from %q (%v), want staging's id", prod.PromoteFrom, err)
	}
	// Back from staging to production would be a cycle: refused at the form.
	r = br.post("/applications/"+a.ID+"/environments/"+staging.ID+"/promote-from", url.Values{"promote_from": {"production"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if !strings.Contains(testid(r, "promotion-error").Text(), "promotion_cycle") {
		t.Fatalf("cycle: %s", truncate(r.body))
	}
}
