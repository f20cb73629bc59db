package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/store"
)

// TestDayTwo_RunNowNeedsDeployAndBackupsRestore: schedules and backups
// are listed with apps:read; running a job now, backing up and restoring
// need apps:deploy, and a restore is refused while a deployment runs.
func TestDayTwo_RunNowNeedsDeployAndBackupsRestore(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	want(t, b.apply(t, twoServices, ""), http.StatusCreated, "")
	ctx := context.Background()
	app := appID(t, b, "shop")
	env, err := b.st.GetEnvironmentByName(ctx, b.team.ID, app, "staging")
	if err != nil {
		t.Fatal(err)
	}
	next := time.Date(2030, 1, 1, 3, 0, 0, 0, time.UTC)
	if err := b.st.SetEnvironmentSchedules(ctx, b.team.ID, app, env.ID, "dep_x", []store.ScheduleParams{{Kind: store.ScheduleJob, Name: "report", Spec: "0 3 * * *", NextRunAt: next}}); err != nil {
		t.Fatal(err)
	}
	base := "/api/v1/applications/shop/environments/staging"

	r := b.do(t, b.viewer, http.MethodGet, base+"/schedules", "", nil)
	want(t, r, http.StatusOK, "")
	if s := r.body["schedules"].([]any); len(s) != 1 || s[0].(map[string]any)["next_run_at"] != "2030-01-01T03:00:00Z" {
		t.Fatalf("schedules = %s", r.raw)
	}
	want(t, b.do(t, b.viewer, http.MethodPost, base+"/jobs/report/runs", "", nil), http.StatusForbidden, "permission_denied")
	want(t, b.do(t, b.owner, http.MethodPost, base+"/jobs/ghost/runs", "", nil), http.StatusNotFound, "job_not_scheduled")
	r = b.do(t, b.owner, http.MethodPost, base+"/jobs/report/runs", "", nil)
	want(t, r, http.StatusAccepted, "")
	if r.body["state"] != "queued" || r.body["origin"] != "manual" {
		t.Fatalf("run = %s", r.raw)
	}

	want(t, b.do(t, b.viewer, http.MethodPost, base+"/backups", "application/json", []byte(`{"volume":"data"}`)), http.StatusForbidden, "permission_denied")
	want(t, b.do(t, b.owner, http.MethodPost, base+"/backups", "application/json", []byte(`{}`)), http.StatusUnprocessableEntity, "backup_subject_invalid")
	r = b.do(t, b.owner, http.MethodPost, base+"/backups", "application/json", []byte(`{"volume":"data"}`))
	want(t, r, http.StatusAccepted, "")
	id := r.body["id"].(string)
	// Not restorable until it succeeded.
	want(t, b.do(t, b.owner, http.MethodPost, base+"/restores", "application/json", []byte(`{"backup":"`+id+`"}`)), http.StatusUnprocessableEntity, "backup_not_restorable")
	if err := b.st.StartBackup(ctx, b.team.ID, id, store.TargetDirectory, "k", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := b.st.FinishBackup(ctx, b.team.ID, id, store.BackupSucceeded, 10, "abc", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.CreateDeployment(ctx, b.team.ID, store.DeploymentParams{EnvironmentID: env.ID, Revision: 1, Origin: store.OriginBuild}); err != nil {
		t.Fatal(err)
	}
	want(t, b.do(t, b.owner, http.MethodPost, base+"/restores", "application/json", []byte(`{"backup":"`+id+`"}`)), http.StatusConflict, "deployment_in_progress")
	r = b.do(t, b.viewer, http.MethodGet, base+"/backups", "", nil)
	want(t, r, http.StatusOK, "")
	if bs := r.body["backups"].([]any); len(bs) != 1 || bs[0].(map[string]any)["sha256"] != "abc" || r.body["target"] != "directory" {
		t.Fatalf("backups = %s", r.raw)
	}
}
