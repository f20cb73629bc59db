package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

// succeed moves a requested deployment to succeeded with rendered as its
// capture, as the worker would.
func succeed(t *testing.T, b *testBundle, teamID string, d store.Deployment, rendered string) {
	t.Helper()
	ctx := context.Background()
	var err error
	for _, to := range []store.DeploymentState{store.StateCapturing, store.StatePreparing, store.StateRollingOut, store.StateSucceeded} {
		if to == store.StatePreparing {
			if _, err := b.store.RecordCapture(ctx, teamID, d.ID, store.Capture{Manifest: []byte(rendered), Rendered: []byte(rendered), Variables: []byte(`{}`)}); err != nil {
				t.Fatal(err)
			}
		}
		if d, err = b.store.TransitionDeployment(ctx, teamID, d.ID, []store.DeploymentState{d.State}, to); err != nil {
			t.Fatal(err)
		}
	}
}

// TestServiceRestartAndScale: Restart on the Overview queues a forced
// rolling update of a service the environment runs and records it; Scale
// saves the new replica count as a field edit and deploys the
// environment, setting the environment's variable when replicas
// references one; viewers get neither.
func TestServiceRestartAndScale(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)
	ctx := context.Background()
	appID, d := deployShop(t, b, br, owner.team.ID)
	succeed(t, b, owner.team.ID, d, `{"metadata":{"name":"shop"},"spec":{"services":[{"name":"web","replicas":2,"source":{"type":"image","image":"registry.example/shop:1"}}]}}`)
	base := "/applications/" + appID + "/environments/production/services/web"

	overview := br.get("/applications/" + appID)
	controls := testid(overview, "service-controls")
	if action, _ := controls.Attr("action"); action != base+"/scale" {
		t.Fatalf("the controls' form posts to %q, want Scale's address", action)
	}
	if action, _ := controls.Find(`[data-testid="service-restart"]`).Attr("formaction"); action != base+"/restart" {
		t.Fatalf("Restart posts to %q", action)
	}
	if controls.Find(`input[name="_csrf"]`).Length() != 1 {
		t.Fatal("the controls' form carries no CSRF field")
	}
	if v, _ := testid(overview, "service-scale-replicas").Attr("value"); v != "2" {
		t.Fatalf("scale input starts at %q, want the current 2", v)
	}

	r := br.post(base+"/restart", nil)
	wantStatus(t, r, http.StatusSeeOther)
	if loc := r.header.Get("Location"); loc != base+"/logs?restarted=1" {
		t.Fatalf("restart lands on %q", loc)
	}
	var jobs int
	if err := b.store.Tx().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'service_restart' AND args->>'service' = 'web' AND args->>'environment_id' = $1`, d.EnvironmentID).Scan(&jobs); err != nil || jobs != 1 {
		t.Fatalf("%d restart jobs queued (%v), want 1", jobs, err)
	}
	events, _ := b.store.ListEvents(ctx, owner.team.ID, store.EventFilter{Verb: "service.restart"})
	if len(events) != 1 || events[0].Actor != "user:"+owner.user.ID {
		t.Fatalf("restart events %+v", events)
	}
	if r := br.post(strings.Replace(base, "/web", "/worker", 1)+"/restart", nil); r.status != http.StatusNotFound || !strings.Contains(r.body, "service_not_found") {
		t.Fatalf("restart of a service the environment does not run: %d", r.status)
	}

	r = br.post(base+"/scale", url.Values{"replicas": {"3"}})
	wantStatus(t, r, http.StatusSeeOther)
	if !strings.Contains(r.header.Get("Location"), "/deployments/dep_") {
		t.Fatalf("scale lands on %q, want the deployment it requested", r.header.Get("Location"))
	}
	rev, _ := b.store.GetCurrentManifestRevision(ctx, owner.team.ID, appID)
	m, _ := manifest.Decode(rev.Manifest, "json")
	if m.Spec.Services[0].Replicas.Or(0) != 3 {
		t.Fatalf("saved replicas %+v, want 3", m.Spec.Services[0].Replicas)
	}
	if r := br.post(base+"/scale", url.Values{"replicas": {"0"}}); r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, "replicas_invalid") {
		t.Fatalf("scale to 0: %d", r.status)
	}

	viewer := b.addMember(t, owner.team, "viewer@example.com", store.RoleViewer)
	vb := b.sessionBrowser(t, viewer)
	if testid(vb.get("/applications/"+appID), "service-controls").Length() != 0 {
		t.Error("a viewer sees restart and scale")
	}
	wantStatus(t, vb.post(base+"/restart", nil), http.StatusForbidden)
	wantStatus(t, vb.post(base+"/scale", url.Values{"replicas": {"5"}}), http.StatusForbidden)
}

// TestServiceScale_Variable: a service whose replicas reference a
// variable is scaled per environment: the environment's value changes,
// the reference and the other environments' values stay.
func TestServiceScale_Variable(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	m := strings.Replace(shopManifest(`"${{ vars.web_replicas }}"`), "[[spec.services]]", `[spec.variables]
web_replicas = 1

[spec.environments.staging]

[spec.environments.production]

[[spec.services]]`, 1)
	owner, br, a := b.ownerWithApp(t, m)
	ctx := context.Background()
	prodEnv, err := b.store.GetEnvironmentByName(ctx, owner.team.ID, a.ID, "production")
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, br.post("/applications/"+a.ID+"/environments/"+prodEnv.ID+"/deploy", nil), http.StatusSeeOther)
	ds, _ := b.store.ListDeployments(ctx, owner.team.ID, store.DeploymentFilter{ApplicationID: a.ID})
	succeed(t, b, owner.team.ID, ds[0], `{"metadata":{"name":"shop"},"spec":{"services":[{"name":"web","replicas":1,"source":{"type":"image","image":"registry.example/shop:1"}}]}}`)

	r := br.post("/applications/"+a.ID+"/environments/production/services/web/scale", url.Values{"replicas": {"4"}})
	wantStatus(t, r, http.StatusSeeOther)
	rev, _ := b.store.GetCurrentManifestRevision(ctx, owner.team.ID, a.ID)
	saved, _ := manifest.Decode(rev.Manifest, "json")
	if !saved.Spec.Services[0].Replicas.IsRef() {
		t.Fatalf("scaling replaced the reference: %+v", saved.Spec.Services[0].Replicas)
	}
	prod, staging := saved.Spec.Environments["production"], saved.Spec.Environments["staging"]
	if v, ok := prod.Variables["web_replicas"]; !ok || v.Interface() != int64(4) {
		t.Fatalf("production's web_replicas %v, want 4", prod.Variables)
	}
	if _, ok := staging.Variables["web_replicas"]; ok {
		t.Fatalf("staging's variables changed: %v", staging.Variables)
	}
}
