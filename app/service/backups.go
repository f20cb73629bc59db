package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/slipwayhq/slipway/backupstore"
	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

// DayTwo is what the dashboard and the API show of an environment's
// scheduled work and data: its schedules with their next run, the latest
// job runs, its backups, restores and whether a restore holds it stopped.
type DayTwo struct {
	Env       store.Environment
	Schedules []store.Schedule
	Runs      []store.JobRun
	Backups   []store.Backup
	Restores  []store.Restore
	// Hold is the restore keeping the environment stopped, if any.
	Hold *store.Restore
	// Target is "directory" or "s3 <endpoint>/<bucket>".
	Target string
}

// LoadDayTwo reads it for the environment envName of appID.
func LoadDayTwo(ctx context.Context, st *store.Store, teamID, appID, envName string) (DayTwo, error) {
	env, err := EnvironmentByName(ctx, st, teamID, appID, envName)
	if err != nil {
		return DayTwo{}, err
	}
	out := DayTwo{Env: env, Target: store.TargetDirectory}
	if out.Schedules, err = st.ListSchedules(ctx, teamID, env.ID); err != nil {
		return out, err
	}
	if out.Runs, err = st.ListJobRuns(ctx, teamID, env.ID, "", 50); err != nil {
		return out, err
	}
	if out.Backups, err = st.ListBackups(ctx, teamID, store.BackupFilter{EnvironmentID: env.ID, Limit: 100}); err != nil {
		return out, err
	}
	if out.Restores, err = st.ListRestores(ctx, teamID, env.ID, 20); err != nil {
		return out, err
	}
	if hold, err := st.EnvironmentHold(ctx, teamID, env.ID); err == nil {
		out.Hold = &hold
	} else if !errors.Is(err, store.ErrNotFound) {
		return out, err
	}
	if t, err := st.GetBackupTarget(ctx, teamID, env.ID); err == nil {
		out.Target = "s3 " + t.Endpoint + "/" + t.Bucket
	} else if !errors.Is(err, store.ErrNotFound) {
		return out, err
	}
	return out, nil
}

// RunJobNow queues a run of a scheduled job of the environment's current
// deployment (the caller checked apps:deploy).
func RunJobNow(ctx context.Context, st *store.Store, a Actor, enqueue Enqueue, appID, envName, job string) (store.JobRun, error) {
	env, err := EnvironmentByName(ctx, st, a.TeamID, appID, envName)
	if err != nil {
		return store.JobRun{}, err
	}
	if _, err := st.GetSchedule(ctx, a.TeamID, env.ID, store.ScheduleJob, job); errors.Is(err, store.ErrNotFound) {
		return store.JobRun{}, &NotFoundError{Field: "job", Code: "job_not_scheduled",
			Message: fmt.Sprintf("the deployment running in %s has no scheduled job %q", envName, job)}
	} else if err != nil {
		return store.JobRun{}, err
	}
	var run store.JobRun
	err = st.WithTx(ctx, func(tx *store.Store) error {
		if run, err = tx.CreateJobRun(ctx, a.TeamID, store.JobRunParams{ApplicationID: appID, EnvironmentID: env.ID, Job: job,
			Origin: store.ByHand, Actor: a.String()}); err != nil {
			return err
		}
		if err := enqueue(ctx, tx, jobs.JobRunArgs{TeamID: a.TeamID, RunID: run.ID}); err != nil {
			return err
		}
		return record(ctx, tx, a, "job.run", "job_run", run.ID, map[string]any{"environment": envName, "job": job})
	})
	return run, err
}

// CreateBackup queues a backup by hand of a volume or a Postgres service
// (exactly one) of the environment.
func CreateBackup(ctx context.Context, st *store.Store, a Actor, enqueue Enqueue, appID, envName, volume, service string) (store.Backup, error) {
	env, err := EnvironmentByName(ctx, st, a.TeamID, appID, envName)
	if err != nil {
		return store.Backup{}, err
	}
	kind, subject := manifest.BackupVolume, volume
	switch {
	case volume != "" && service != "", volume == "" && service == "":
		return store.Backup{}, &InputError{Field: "volume", Code: "backup_subject_invalid", Message: "name a volume or a Postgres service, not both"}
	case service != "":
		kind, subject = manifest.BackupPostgres, service
	}
	var b store.Backup
	err = st.WithTx(ctx, func(tx *store.Store) error {
		if b, err = tx.CreateBackup(ctx, a.TeamID, store.BackupParams{ApplicationID: appID, EnvironmentID: env.ID, EnvironmentName: env.Name,
			Kind: kind, Subject: subject, Origin: store.ByHand, Actor: a.String()}); err != nil {
			return err
		}
		if err := enqueue(ctx, tx, jobs.BackupArgs{TeamID: a.TeamID, BackupID: b.ID}); err != nil {
			return err
		}
		return record(ctx, tx, a, "backup.create", "backup", b.ID, map[string]any{"environment": envName, "kind": kind, "subject": subject})
	})
	return b, err
}

// RestoreBackup queues the restore of backupID into the environment
// envName of the same application. It is refused while a deployment or
// another restore of that environment runs.
func RestoreBackup(ctx context.Context, st *store.Store, a Actor, enqueue Enqueue, appID, backupID, envName string) (store.Restore, error) {
	env, err := EnvironmentByName(ctx, st, a.TeamID, appID, envName)
	if err != nil {
		return store.Restore{}, err
	}
	b, err := st.GetBackup(ctx, a.TeamID, backupID)
	if err != nil || b.ApplicationID != appID {
		return store.Restore{}, &NotFoundError{Field: "backup", Code: "backup_not_found", Message: fmt.Sprintf("the application has no backup %q", backupID)}
	}
	if b.State != store.BackupSucceeded {
		return store.Restore{}, &InputError{Field: "backup", Code: "backup_not_restorable", Message: fmt.Sprintf("backup %s is %s; only a succeeded backup can be restored", b.ID, b.State)}
	}
	var r store.Restore
	err = st.WithTx(ctx, func(tx *store.Store) error {
		if r, err = tx.CreateRestore(ctx, a.TeamID, env.ID, b.ID, a.String()); err != nil {
			return err
		}
		if err := enqueue(ctx, tx, jobs.RestoreArgs{TeamID: a.TeamID, RestoreID: r.ID}); err != nil {
			return err
		}
		return record(ctx, tx, a, "backup.restore", "restore", r.ID, map[string]any{"environment": envName, "backup": b.ID})
	})
	var ce *store.ConflictError
	if errors.As(err, &ce) {
		msg := "a deployment of " + envName + " is running; restore once it ends"
		if ce.Code == "restore_in_progress" {
			msg = "another restore of " + envName + " is running"
		}
		// Joined with the conflict, so the API answers 409.
		return store.Restore{}, errors.Join(&InputError{Field: "environment", Code: ce.Code, Message: msg}, err)
	}
	return r, err
}

// TargetSetter stores S3 targets with their key sealed (backupctl.Targets).
type TargetSetter interface {
	SetS3(ctx context.Context, teamID, envID string, cfg backupstore.S3Config) error
}

// SetBackupTarget stores an S3 target for the environment's backups after
// checking it reaches its bucket.
func SetBackupTarget(ctx context.Context, st *store.Store, a Actor, targets TargetSetter, appID, envName string, cfg backupstore.S3Config) error {
	env, err := EnvironmentByName(ctx, st, a.TeamID, appID, envName)
	if err != nil {
		return err
	}
	if cfg.Endpoint == "" || cfg.Bucket == "" || cfg.AccessKeyID == "" || cfg.SecretAccessKey == "" {
		return &InputError{Field: "endpoint", Code: "backup_target_invalid", Message: "endpoint, bucket, access_key_id and secret_access_key are required"}
	}
	if err := targets.SetS3(ctx, a.TeamID, env.ID, cfg); err != nil {
		return &InputError{Field: "endpoint", Code: "backup_target_unreachable", Message: err.Error()}
	}
	return record(ctx, st, a, "backup.target", "environment", env.ID, map[string]any{"endpoint": cfg.Endpoint, "bucket": cfg.Bucket})
}
