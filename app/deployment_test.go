package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/store"
)

// deployShop creates the shop application through Save and deploy and
// returns the application id and the deployment it requested.
func deployShop(t *testing.T, b *testBundle, br *browser, teamID string) (string, store.Deployment) {
	t.Helper()
	r := br.post("/manifest", url.Values{"manifest": {shopManifest("2")}, "intent": {"deploy"}})
	wantStatus(t, r, http.StatusSeeOther)
	ds, err := b.store.ListDeployments(context.Background(), teamID, store.DeploymentFilter{})
	if err != nil || len(ds) != 1 {
		t.Fatalf("deployments %v %v", ds, err)
	}
	d := ds[0]
	if want := "/applications/" + d.ApplicationID + "/deployments/" + d.ID; r.header.Get("Location") != want {
		t.Fatalf("redirect %q, want %q", r.header.Get("Location"), want)
	}
	return d.ApplicationID, d
}

// poll fetches the timeline as htmx's every-2s trigger does.
func (br *browser) poll(path string) response {
	br.t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("HX-Request", "true")
	return br.do(req)
}

func TestDeploymentShow_LiveTimelineStopsWhenTerminal(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	ctx := context.Background()
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)
	appID, d := deployShop(t, b, br, owner.team.ID)
	path := "/applications/" + appID + "/deployments/" + d.ID

	r := br.get(path)
	wantStatus(t, r, http.StatusOK)
	tl := testid(r, "deployment-timeline")
	if trig, _ := tl.Attr("hx-trigger"); trig != "every 2s" {
		t.Fatalf("live timeline trigger %q", trig)
	}
	if get, _ := tl.Attr("hx-get"); get != path {
		t.Fatalf("timeline polls %q", get)
	}
	if testid(r, "timeline-empty").Length() != 1 || testid(r, "deployment-cancel").Length() != 1 {
		t.Fatal("a requested deployment shows neither the waiting note nor Cancel")
	}

	// The worker's progress record, as it writes it.
	started := time.Now().Add(-90 * time.Second)
	done := started.Add(30 * time.Second)
	steps := []pipeline.Step{
		{Name: "capture", State: pipeline.StepSucceeded, StartedAt: started, FinishedAt: &done},
		{Name: "job:migrate", State: pipeline.StepSucceeded, Output: "applied 3 migrations", StartedAt: started, FinishedAt: &done},
		{Name: "rollout:web", State: pipeline.StepRunning, Message: "1 of 2 replicas healthy", StartedAt: done},
	}
	raw, _ := json.Marshal(steps)
	from := store.StateRequested
	for _, to := range []store.DeploymentState{store.StateCapturing, store.StatePreparing, store.StateRollingOut} {
		if _, err := b.store.TransitionDeployment(ctx, owner.team.ID, d.ID, []store.DeploymentState{from}, to); err != nil {
			t.Fatal(err)
		}
		from = to
		if to == store.StateCapturing {
			if _, err := b.store.RecordCapture(ctx, owner.team.ID, d.ID, store.Capture{Manifest: json.RawMessage(`{}`), Rendered: json.RawMessage(`{"metadata":{"name":"shop"},"spec":{"services":[{"name":"web","replicas":2,"source":{"type":"image","image":"registry.example/shop:1"}}],"routes":[{"hostname":"shop.example.com","service":"web","port":8080}]}}`), Variables: json.RawMessage(`{}`), SpecHash: "5eca1f"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := b.store.SetDeploymentSteps(ctx, owner.team.ID, d.ID, raw); err != nil {
		t.Fatal(err)
	}
	r = br.poll(path)
	wantStatus(t, r, http.StatusOK)
	if testid(r, "topbar").Length() != 0 || testid(r, "deployment-meta").Length() != 0 {
		t.Fatal("the poll got more than the timeline")
	}
	labels := testid(r, "step").Map(func(_ int, s *goquery.Selection) string {
		return strings.Join(strings.Fields(s.Find("strong").Text()), " ")
	})
	if strings.Join(labels, "|") != "Capturing|Running job migrate|Rolling out web" {
		t.Fatalf("steps %q", labels)
	}
	if out := testid(r, "step-output").Text(); out != "applied 3 migrations" {
		t.Errorf("job output %q", out)
	}
	if !strings.Contains(r.doc.Find(`[data-step="capture"]`).Text(), "30s") {
		t.Errorf("capture step lacks its elapsed time: %q", r.doc.Find(`[data-step="capture"]`).Text())
	}
	if trig, _ := testid(r, "deployment-timeline").Attr("hx-trigger"); trig != "every 2s" {
		t.Fatal("a running deployment stopped polling")
	}

	if _, err := b.store.TransitionDeployment(ctx, owner.team.ID, d.ID, []store.DeploymentState{store.StateRollingOut}, store.StateSucceeded); err != nil {
		t.Fatal(err)
	}
	r = br.poll(path)
	tl = testid(r, "deployment-timeline")
	if st, _ := tl.Attr("data-state"); st != "succeeded" {
		t.Fatalf("state %q", st)
	}
	if _, polls := tl.Attr("hx-trigger"); polls {
		t.Fatal("a finished deployment keeps polling")
	}
	// It runs now: nothing to retry or restore, a way to visit it instead.
	for _, id := range []string{"deployment-retry", "deployment-restore", "deployment-cancel"} {
		if testid(r, id).Length() != 0 {
			t.Errorf("the live, succeeded deployment offers %s", id)
		}
	}
	if href, _ := testid(r, "deployment-visit-link").Attr("href"); href != "http://shop.example.com/" {
		t.Errorf("visit link %q, want the route", href)
	}
	full := br.get(path)
	// The page names the spec hash of what the deployment runs.
	if got := strings.TrimSpace(testid(full, "deployment-spec-hash").Find(".mono").Text()); got != "5eca1f" {
		t.Errorf("deployment page spec hash %q, want 5eca1f", got)
	}
	if testid(full, "deployment-live").Length() != 1 || !strings.Contains(testid(full, "deployment-meta").Text(), "built from the saved manifest") {
		t.Errorf("the page does not say the deployment is live and how it was built: %q", testid(full, "deployment-meta").Text())
	}
	// The overview shows what runs, from the rendered manifest.
	r = br.get("/applications/" + appID)
	wantStatus(t, r, http.StatusOK)
	if st, _ := r.doc.Find(`[data-environment="production"] h2 [data-testid="state-badge"]`).Attr("data-state"); st != "running" {
		t.Errorf("production state %q, want running", st)
	}
	if cells := testid(r, "service-row").Find("td"); cells.Length() != 4 || strings.Fields(cells.Eq(1).Text())[0] != "2" || cells.Eq(2).Find(`[data-testid="service-image"]`).Text() != "registry.example/shop:1" {
		t.Errorf("services row %q", cells.Text())
	}
	// No gateway has reported a certificate: the link is plain http.
	if href, _ := testid(r, "route-link").Attr("href"); href != "http://shop.example.com/" {
		t.Errorf("route link %q", href)
	}
	r = br.get("/applications")
	if !strings.Contains(testid(r, "application-last-deploy").Text(), "owner@example.com") {
		t.Errorf("last deployment %q does not name who", testid(r, "application-last-deploy").Text())
	}

	// Restore asks for a new deployment of the same capture.
	r = br.post(path+"/restore", nil)
	wantStatus(t, r, http.StatusSeeOther)
	ds, _ := b.store.ListDeployments(ctx, owner.team.ID, store.DeploymentFilter{})
	if len(ds) != 2 || ds[0].Origin != store.OriginRestore || ds[0].RestoredFrom != d.ID {
		t.Fatalf("restore made %+v", ds[0])
	}

	// The restore fails while preparing: its step reads failed, not
	// running, and it offers Retry, not a restore of itself; the one that
	// runs is marked live in the list and offers the roll back no more.
	failed := ds[0]
	var err error
	for _, to := range []store.DeploymentState{store.StateCapturing, store.StatePreparing} {
		if failed, err = b.store.TransitionDeployment(ctx, owner.team.ID, failed.ID, []store.DeploymentState{failed.State}, to); err != nil {
			t.Fatal(err)
		}
	}
	prep, _ := json.Marshal([]pipeline.Step{{Name: "capture", State: pipeline.StepSucceeded, StartedAt: started, FinishedAt: &done}, {Name: "plan", State: pipeline.StepSucceeded, Message: "1 changes", StartedAt: started, FinishedAt: &done}, {Name: "prepare", State: pipeline.StepRunning, StartedAt: done}})
	if err := b.store.SetDeploymentSteps(ctx, owner.team.ID, failed.ID, prep); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.FailDeployment(ctx, owner.team.ID, failed.ID, "image_not_found", "service web: image registry.example/shop:9 not found"); err != nil {
		t.Fatal(err)
	}
	r = br.get("/applications/" + appID + "/deployments/" + failed.ID)
	if st, _ := r.doc.Find(`[data-step="prepare"]`).Attr("data-state"); st != "failed" {
		t.Errorf("the step the failure stopped reads %q, want failed", st)
	}
	if msg := r.doc.Find(`[data-step="plan"] .step-message`).Text(); msg != "1 change" {
		t.Errorf("plan message %q, want 1 change", msg)
	}
	if testid(r, "deployment-retry").Length() != 1 || testid(r, "deployment-restore").Length() != 0 || testid(r, "deployment-visit").Length() != 0 {
		t.Error("a failed deployment must offer Retry, and neither a restore nor a visit")
	}
	if href, _ := testid(r, "deployment-live-link").Attr("href"); href != path {
		t.Errorf("the failed deployment links %q as what runs, want %q", href, path)
	}
	r = br.get("/applications/" + appID + "/deployments")
	if id, _ := r.doc.Find(`[data-testid="deployment-row"]:has([data-testid="deployment-live"])`).Attr("data-id"); id != d.ID || testid(r, "deployment-live").Length() != 1 {
		t.Errorf("the list marks %q live, want %s alone", id, d.ID)
	}
}

func TestDeploymentCancel_AndFinishedRefusal(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)
	appID, d := deployShop(t, b, br, owner.team.ID)
	path := "/applications/" + appID + "/deployments/" + d.ID
	wantStatus(t, br.post(path+"/cancel", nil), http.StatusSeeOther)
	got, _ := b.store.GetDeployment(context.Background(), owner.team.ID, d.ID)
	if got.State != store.StateCancelled {
		t.Fatalf("state %s", got.State)
	}
	r := br.post(path+"/cancel", nil)
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if !strings.Contains(testid(r, "deployment-action-error").Text(), "deployment_finished") {
		t.Fatalf("refusal not shown beside the buttons: %s", truncate(r.body))
	}
	// Retry deploys the environment again.
	r = br.post(path+"/retry", nil)
	wantStatus(t, r, http.StatusSeeOther)
	if strings.HasSuffix(r.header.Get("Location"), d.ID) {
		t.Fatal("retry did not make a new deployment")
	}
}

func TestEnvironments_DeployAndPromoted(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	m := shopManifest("1") + `
[spec.environments.staging]

[spec.environments.production]
promote_from = "staging"
`
	_, br, a := b.ownerWithApp(t, m)
	r := br.get("/applications/" + a.ID + "/environments")
	wantStatus(t, r, http.StatusOK)
	if n := testid(r, "environment-row").Length(); n != 2 {
		t.Fatalf("%d environments", n)
	}
	prod := r.doc.Find(`[data-testid="environment-row"][data-environment="production"]`)
	if prod.Find(`[data-testid="environment-promoted"]`).Length() != 1 || prod.Find(`[data-testid="environment-deploy"]`).Length() != 0 {
		t.Fatal("production should say it only receives promotions and offer no Deploy")
	}
	form := r.doc.Find(`[data-environment="staging"] form`)
	if c, _ := form.Attr("hx-confirm"); !strings.Contains(c, "Deploy staging") {
		t.Fatalf("deploy does not confirm: %q", c)
	}
	action, _ := form.Attr("action")
	r = br.post(action, nil)
	wantStatus(t, r, http.StatusSeeOther)
	if !strings.Contains(r.header.Get("Location"), "/deployments/") {
		t.Fatalf("deploy redirect %q", r.header.Get("Location"))
	}
	r = br.get("/applications/" + a.ID + "/deployments")
	if testid(r, "deployment-row").Length() != 1 {
		t.Fatal("deployment not listed")
	}

	// Events: everything about the application, filterable by verb.
	r = br.get("/applications/" + a.ID + "/events")
	verbs := testid(r, "event-row").Map(func(_ int, s *goquery.Selection) string { v, _ := s.Attr("data-verb"); return v })
	for _, want := range []string{"application.create", "manifest.save", "environment.create", "deployment.request"} {
		if !strings.Contains(strings.Join(verbs, " "), want) {
			t.Errorf("events %v lack %s", verbs, want)
		}
	}
	r = br.get("/applications/" + a.ID + "/events?verb=deployment.request")
	if n := testid(r, "event-row").Length(); n != 1 {
		t.Fatalf("filtered events: %d", n)
	}
	r = br.get("/applications/" + a.ID + "/events?verb=nothing.happened")
	if testid(r, "events-empty").Length() != 1 {
		t.Fatal("an empty filter shows no explanation")
	}
}
