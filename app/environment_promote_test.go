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
// would: the current revision captured and rendered for it, one image
// prepared.
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
	d, err := st.CreateDeployment(ctx, teamID, store.DeploymentParams{EnvironmentID: env.ID, Revision: rev.Revision, Origin: store.OriginBuild})
	if err != nil {
		t.Fatal(err)
	}
	for _, to := range []store.DeploymentState{store.StateCapturing, store.StatePreparing, store.StateRollingOut, store.StateSucceeded} {
		if to == store.StatePreparing {
			if _, err := st.RecordCapture(ctx, teamID, d.ID, store.Capture{Manifest: rev.Manifest, Rendered: renderedJSON, Variables: []byte(`{}`)}); err != nil {
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
	if testid(r, "promotion-source").Text() != built.ID || testid(r, "promotion-changes").Length() != 1 {
		t.Fatalf("plan: %s", truncate(r.body))
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
