package store_test

import (
	"testing"
	"time"

	"github.com/slipwayhq/slipway/store"
)

func TestStore_Schedules(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := b.a
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	must(t, b.st.SetEnvironmentSchedules(b.ctx, a.team.ID, a.app.ID, a.env.ID, "dep_1", []store.ScheduleParams{
		{Kind: store.ScheduleJob, Name: "report", Spec: "@hourly", NextRunAt: t0.Add(time.Hour)},
		{Kind: store.ScheduleBackup, Name: "db", Spec: "@daily", NextRunAt: t0.Add(14 * time.Hour)},
	}))
	// A second deployment keeps an unchanged schedule's next run, moves a
	// changed one and drops a removed one.
	must(t, b.st.SetEnvironmentSchedules(b.ctx, a.team.ID, a.app.ID, a.env.ID, "dep_2", []store.ScheduleParams{
		{Kind: store.ScheduleJob, Name: "report", Spec: "@hourly", Concurrency: "replace", NextRunAt: t0.Add(2 * time.Hour)},
		{Kind: store.ScheduleJob, Name: "cleanup", Spec: "*/5 * * * *", NextRunAt: t0.Add(5 * time.Minute)},
	}))
	list, err := b.st.ListSchedules(b.ctx, a.team.ID, a.env.ID)
	must(t, err)
	if len(list) != 2 || list[0].Name != "cleanup" || list[1].Name != "report" {
		t.Fatalf("schedules = %+v", list)
	}
	if r := list[1]; !r.NextRunAt.Equal(t0.Add(time.Hour)) || r.Concurrency != "replace" || r.DeploymentID != "dep_2" {
		t.Errorf("report = %+v, want its next run kept at 11:00 and concurrency replace", r)
	}
	// Another team sees none of them.
	if other, err := b.st.ListSchedules(b.ctx, b.b.team.ID, a.env.ID); err != nil || len(other) != 0 {
		t.Errorf("other team's list = %v, %v", other, err)
	}

	// Only due schedules are claimed.
	must(t, b.st.WithTx(b.ctx, func(tx *store.Store) error {
		due, err := tx.ClaimDueSchedules(b.ctx, t0.Add(10*time.Minute), 10)
		if err != nil {
			return err
		}
		if len(due) != 1 || due[0].Name != "cleanup" {
			t.Fatalf("due = %+v, want cleanup only", due)
		}
		return tx.AdvanceSchedule(b.ctx, a.team.ID, due[0].ID, t0.Add(10*time.Minute), t0.Add(15*time.Minute))
	}))
	sc, err := b.st.GetSchedule(b.ctx, a.team.ID, a.env.ID, store.ScheduleJob, "cleanup")
	must(t, err)
	if !sc.NextRunAt.Equal(t0.Add(15*time.Minute)) || sc.LastRunAt == nil {
		t.Errorf("cleanup after advance = %+v", sc)
	}
}

func TestStore_JobRuns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := b.a
	r, err := b.st.CreateJobRun(b.ctx, a.team.ID, store.JobRunParams{ApplicationID: a.app.ID, EnvironmentID: a.env.ID, Job: "report", Origin: store.FromSchedule})
	must(t, err)
	now := time.Now()
	must(t, b.st.StartJobRun(b.ctx, a.team.ID, r.ID, "dep_1", "slw-x-run", now))
	running, err := b.st.RunningJobRuns(b.ctx, a.team.ID, a.env.ID, "report", "")
	must(t, err)
	if len(running) != 1 || running[0].ID != r.ID {
		t.Fatalf("running = %+v", running)
	}
	code := 3
	must(t, b.st.FinishJobRun(b.ctx, a.team.ID, r.ID, store.JobRunOutcome{State: store.RunFailed, ExitCode: &code, Output: "boom\n", EndedAt: now}))
	// The first outcome stays.
	wantErr(t, b.st.FinishJobRun(b.ctx, a.team.ID, r.ID, store.JobRunOutcome{State: store.RunSucceeded, EndedAt: now}), store.ErrNotFound)
	got, err := b.st.GetJobRun(b.ctx, a.team.ID, r.ID)
	must(t, err)
	if got.State != store.RunFailed || got.ExitCode == nil || *got.ExitCode != 3 || got.Output != "boom\n" {
		t.Errorf("run = %+v", got)
	}
	_, err = b.st.GetJobRun(b.ctx, b.b.team.ID, r.ID)
	wantErr(t, err, store.ErrNotFound)
}

// TestStore_RestoreAndDeploymentExclude: a restore is refused while a
// deployment runs, and a deployment while a restore runs; a failed
// restore holds the environment until a deployment succeeds.
func TestStore_RestoreAndDeploymentExclude(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := b.a
	bk, err := b.st.CreateBackup(b.ctx, a.team.ID, store.BackupParams{ApplicationID: a.app.ID, EnvironmentID: a.env.ID,
		EnvironmentName: "production", Kind: "volume", Subject: "data", Origin: store.ByHand})
	must(t, err)

	d, err := b.st.CreateDeployment(b.ctx, a.team.ID, store.DeploymentParams{EnvironmentID: a.env.ID, Revision: 1, Origin: store.OriginBuild})
	must(t, err)
	_, err = b.st.CreateRestore(b.ctx, a.team.ID, a.env.ID, bk.ID, "")
	wantConflict(t, err, "environment_id", "deployment_in_progress")
	_, err = b.st.TransitionDeployment(b.ctx, a.team.ID, d.ID, []store.DeploymentState{store.StateRequested}, store.StateCancelled)
	must(t, err)

	r, err := b.st.CreateRestore(b.ctx, a.team.ID, a.env.ID, bk.ID, "")
	must(t, err)
	_, err = b.st.CreateRestore(b.ctx, a.team.ID, a.env.ID, bk.ID, "")
	wantConflict(t, err, "environment_id", "restore_in_progress")
	_, err = b.st.CreateDeployment(b.ctx, a.team.ID, store.DeploymentParams{EnvironmentID: a.env.ID, Revision: 1, Origin: store.OriginBuild})
	wantConflict(t, err, "environment_id", "restore_in_progress")
	// Another team's backup cannot be restored here.
	_, err = b.st.CreateRestore(b.ctx, b.b.team.ID, b.b.env.ID, bk.ID, "")
	wantErr(t, err, store.ErrNotFound)

	must(t, b.st.UpdateRestore(b.ctx, a.team.ID, r.ID, store.RestoreFailed, []string{"web"}, "archive truncated"))
	hold, err := b.st.EnvironmentHold(b.ctx, a.team.ID, a.env.ID)
	must(t, err)
	if hold.ID != r.ID || !hold.Holds() || hold.Message != "archive truncated" || len(hold.Stopped) != 1 {
		t.Fatalf("hold = %+v", hold)
	}
	// Deploying is how the environment is brought back as it is.
	_, err = b.st.CreateDeployment(b.ctx, a.team.ID, store.DeploymentParams{EnvironmentID: a.env.ID, Revision: 1, Origin: store.OriginBuild})
	must(t, err)
	must(t, b.st.ReleaseRestoreHolds(b.ctx, a.team.ID, a.env.ID))
	_, err = b.st.EnvironmentHold(b.ctx, a.team.ID, a.env.ID)
	wantErr(t, err, store.ErrNotFound)
}

func TestStore_Backups(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := b.a
	var ids []string
	for i := range 3 {
		bk, err := b.st.CreateBackup(b.ctx, a.team.ID, store.BackupParams{ApplicationID: a.app.ID, EnvironmentID: a.env.ID,
			EnvironmentName: "production", Kind: "postgres", Subject: "db", Name: "db", Origin: store.FromSchedule})
		must(t, err)
		ids = append(ids, bk.ID)
		must(t, b.st.StartBackup(b.ctx, a.team.ID, bk.ID, store.TargetDirectory, "x/"+bk.ID, time.Now()))
		must(t, b.st.FinishBackup(b.ctx, a.team.ID, bk.ID, store.BackupSucceeded, int64(100+i), "abc", "", time.Now()))
	}
	must(t, b.st.MarkBackupDeleted(b.ctx, a.team.ID, ids[0], "retention: more than 2 kept"))
	list, err := b.st.ListBackups(b.ctx, a.team.ID, store.BackupFilter{EnvironmentID: a.env.ID, Name: "db"})
	must(t, err)
	if len(list) != 2 || list[0].ID != ids[2] || list[0].SizeBytes != 102 || list[0].Target != store.TargetDirectory {
		t.Fatalf("list = %+v", list)
	}
	if other, _ := b.st.ListBackups(b.ctx, b.b.team.ID, store.BackupFilter{}); len(other) != 0 {
		t.Errorf("other team lists %d backups", len(other))
	}
}
