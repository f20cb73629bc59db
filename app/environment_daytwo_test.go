package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

// TestEnvironmentDayTwo_Page: the Environments tab links an environment's
// schedules-and-backups page, which lists its scheduled jobs with their
// next run, offers its volumes and Postgres services to back up, queues a
// backup, refuses a restore while a deployment runs and queues it once the
// deployment ended, and names field and code of a refusal; a viewer sees
// no forms and is refused; a post without the CSRF token is refused.
func TestEnvironmentDayTwo_Page(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupJobs(t)
	owner, br, a := b.ownerWithApp(t, shopManifest("1"))
	teamID := owner.team.ID
	env, err := b.store.CreateEnvironment(ctx, teamID, store.EnvironmentParams{ApplicationID: a.ID, Kind: store.KindEnvironment, Name: "staging", Slug: "staging"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := b.store.CreateDeployment(ctx, teamID, store.DeploymentParams{EnvironmentID: env.ID, Revision: 1, Origin: store.OriginBuild, Actor: "user:test"})
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := json.Marshal(manifest.Manifest{Spec: manifest.Spec{
		Volumes:  []manifest.Volume{{Name: "uploads"}},
		Services: []manifest.Service{{Name: "web"}, {Name: "db", Postgres: &manifest.Postgres{}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.TransitionDeployment(ctx, teamID, d.ID, []store.DeploymentState{store.StateRequested}, store.StateCapturing); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.RecordCapture(ctx, teamID, d.ID, store.Capture{Manifest: rendered, Rendered: rendered, Variables: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	next := time.Date(2030, 1, 2, 3, 0, 0, 0, time.UTC)
	if err := b.store.SetEnvironmentSchedules(ctx, teamID, a.ID, env.ID, d.ID, []store.ScheduleParams{
		{Kind: store.ScheduleJob, Name: "report", Spec: "0 3 * * *", Concurrency: manifest.ConcurrencyForbid, NextRunAt: next},
	}); err != nil {
		t.Fatal(err)
	}

	r := br.get("/applications/" + a.ID + "/environments")
	wantStatus(t, r, http.StatusOK)
	page := "/applications/" + a.ID + "/environments/staging/daytwo"
	if href, _ := r.doc.Find(`[data-environment="staging"] [data-testid="environment-daytwo"]`).Attr("href"); href != page {
		t.Fatalf("the Environments tab links %q for staging, want %q", href, page)
	}
	r = br.get(page)
	wantStatus(t, r, http.StatusOK)
	row := testid(r, "schedule-report").Text()
	if !strings.Contains(row, "0 3 * * *") || !strings.Contains(row, "2030-01-02 03:00:00 UTC") || testid(r, "run-now-report").Length() != 1 {
		t.Fatalf("schedule row %q: want its spec, next run and a run-now button", row)
	}
	var subjects []string
	r.doc.Find(`[data-testid="backup-form"] option`).Each(func(_ int, s *goquery.Selection) { subjects = append(subjects, s.AttrOr("value", "")) })
	if strings.Join(subjects, ",") != "volume:uploads,postgres:db" {
		t.Fatalf("backup subjects %v, want the volume and the Postgres service", subjects)
	}

	wantStatus(t, br.post(page+"/backups", url.Values{"subject": {"volume:uploads"}}), http.StatusSeeOther)
	bs, err := b.store.ListBackups(ctx, teamID, store.BackupFilter{EnvironmentID: env.ID})
	if err != nil || len(bs) != 1 || bs[0].Subject != "uploads" || bs[0].Origin != store.ByHand {
		t.Fatalf("backups after the form: %+v (%v)", bs, err)
	}
	r = br.get(page)
	if testid(r, "backup-"+bs[0].ID).Length() != 1 || testid(r, "restore-"+bs[0].ID).Length() != 0 {
		t.Fatalf("the queued backup is not listed, or offered for restore before it succeeded: %s", truncate(r.body))
	}

	r = br.post(page+"/backups", url.Values{"subject": {"nothing"}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := testid(r, "daytwo-error").Text(); !strings.Contains(got, "volume:") || !strings.Contains(got, "(backup_subject_invalid)") {
		t.Errorf("a backup of nothing: error %q, want field and code", got)
	}
	r = br.post(page+"/jobs/nope/run", nil)
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := testid(r, "daytwo-error").Text(); !strings.Contains(got, "job:") || !strings.Contains(got, "(job_not_scheduled)") {
		t.Errorf("run now of an unknown job: error %q", got)
	}

	if err := b.store.FinishBackup(ctx, teamID, bs[0].ID, store.BackupSucceeded, 42, strings.Repeat("ab", 32), "", time.Now()); err != nil {
		t.Fatal(err)
	}
	r = br.post(page+"/restores", url.Values{"backup": {bs[0].ID}})
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if got := testid(r, "daytwo-error").Text(); !strings.Contains(got, "(deployment_in_progress)") {
		t.Fatalf("a restore while deployment %s is queued: error %q", d.ID, got)
	}
	if _, err := b.store.FailDeployment(ctx, teamID, d.ID, "test", "ended by the test"); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, br.post(page+"/restores", url.Values{"backup": {bs[0].ID}, "_csrf": {""}}), http.StatusForbidden)
	wantStatus(t, br.post(page+"/restores", url.Values{"backup": {bs[0].ID}}), http.StatusSeeOther)
	rs, err := b.store.ListRestores(ctx, teamID, env.ID, 10)
	if err != nil || len(rs) != 1 || rs[0].BackupID != bs[0].ID {
		t.Fatalf("restores after the form: %+v (%v)", rs, err)
	}

	viewer := b.addMember(t, owner.team, "viewer@example.com", store.RoleViewer)
	vb := b.sessionBrowser(t, viewer)
	r = vb.get(page)
	wantStatus(t, r, http.StatusOK)
	if n := testid(r, "run-now-report").Length() + testid(r, "backup-form").Length() + testid(r, "restore-"+bs[0].ID).Length(); n != 0 {
		t.Fatalf("a viewer sees %d of the page's forms", n)
	}
	wantStatus(t, vb.post(page+"/backups", url.Values{"subject": {"volume:uploads"}}), http.StatusForbidden)
	wantStatus(t, vb.post(page+"/jobs/report/run", nil), http.StatusForbidden)
	wantStatus(t, br.get("/applications/"+a.ID+"/environments/nowhere/daytwo"), http.StatusNotFound)
}
