package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/backupctl"
	"github.com/slipwayhq/slipway/scheduler"
	"github.com/slipwayhq/slipway/store"
)

// ScheduleTickInterval is how often the leader worker claims due
// schedules: a run starts within this of its minute.
const ScheduleTickInterval = 10 * time.Second

// ScheduleTickArgs claims the schedules whose time has come and queues a
// run of each (scheduler.Tick).
type ScheduleTickArgs struct{}

// Kind is the River job kind.
func (ScheduleTickArgs) Kind() string { return "schedule_tick" }

// InsertOpts: a failed tick is not retried; the next one comes soon.
func (ScheduleTickArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByPeriod: ScheduleTickInterval}}
}

// ScheduleTickWorker runs ScheduleTickArgs.
type ScheduleTickWorker struct {
	river.WorkerDefaults[ScheduleTickArgs]
	Scheduler *scheduler.Scheduler
}

// Work claims and queues.
func (w *ScheduleTickWorker) Work(ctx context.Context, _ *river.Job[ScheduleTickArgs]) error {
	if w.Scheduler == nil {
		return nil
	}
	_, err := w.Scheduler.Tick(ctx)
	return err
}

// QueueSchedules runs scheduled jobs, backups and restores on their own
// queue, so a long backup never holds up deployments.
const QueueSchedules = "schedules"

// JobRunArgs runs one run of a scheduled job.
type JobRunArgs struct {
	TeamID string `json:"team_id"`
	RunID  string `json:"run_id"`
}

// Kind is the River job kind.
func (JobRunArgs) Kind() string { return "job_run" }

// InsertOpts: Docker being unreachable is retried; the run resumes.
func (JobRunArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueSchedules, MaxAttempts: 10, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// JobRunWorker runs JobRunArgs.
type JobRunWorker struct {
	river.WorkerDefaults[JobRunArgs]
	Scheduler *scheduler.Scheduler
}

// Timeout: the job's own timeout_seconds bounds the run.
func (w *JobRunWorker) Timeout(*river.Job[JobRunArgs]) time.Duration { return -1 }

// Work runs the job to its end.
func (w *JobRunWorker) Work(ctx context.Context, job *river.Job[JobRunArgs]) error {
	return w.Scheduler.Run(ctx, job.Args.TeamID, job.Args.RunID)
}

// BackupArgs takes one backup.
type BackupArgs struct {
	TeamID   string `json:"team_id"`
	BackupID string `json:"backup_id"`
}

// Kind is the River job kind.
func (BackupArgs) Kind() string { return "backup" }

// InsertOpts: retried while Docker or the store is unreachable.
func (BackupArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueSchedules, MaxAttempts: 10, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// BackupWorker runs BackupArgs.
type BackupWorker struct {
	river.WorkerDefaults[BackupArgs]
	Backups *backupctl.Controller
}

// Timeout: each container of a backup is bounded by the controller.
func (w *BackupWorker) Timeout(*river.Job[BackupArgs]) time.Duration { return -1 }

// Work takes the backup; failures are recorded on it.
func (w *BackupWorker) Work(ctx context.Context, job *river.Job[BackupArgs]) error {
	return w.Backups.Backup(ctx, job.Args.TeamID, job.Args.BackupID)
}

// RestoreArgs carries out one restore.
type RestoreArgs struct {
	TeamID    string `json:"team_id"`
	RestoreID string `json:"restore_id"`
}

// Kind is the River job kind.
func (RestoreArgs) Kind() string { return "restore" }

// InsertOpts: retried while Docker or the store is unreachable.
func (RestoreArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueSchedules, MaxAttempts: 10, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// RestoreWorker runs RestoreArgs.
type RestoreWorker struct {
	river.WorkerDefaults[RestoreArgs]
	Backups *backupctl.Controller
}

// Timeout: each container of a restore is bounded by the controller.
func (w *RestoreWorker) Timeout(*river.Job[RestoreArgs]) time.Duration { return -1 }

// Work carries out the restore; failures are recorded on it.
func (w *RestoreWorker) Work(ctx context.Context, job *river.Job[RestoreArgs]) error {
	return w.Backups.Restore(ctx, job.Args.TeamID, job.Args.RestoreID)
}

var _ scheduler.Queue = Queue{}

// RunJob inserts the run of a scheduled job.
func (q Queue) RunJob(ctx context.Context, tx *store.Store, teamID, runID string) error {
	return q.enqueue()(ctx, tx, JobRunArgs{TeamID: teamID, RunID: runID})
}

// Backup inserts a backup.
func (q Queue) Backup(ctx context.Context, tx *store.Store, teamID, backupID string) error {
	return q.enqueue()(ctx, tx, BackupArgs{TeamID: teamID, BackupID: backupID})
}

// Restore inserts a restore.
func (q Queue) Restore(ctx context.Context, tx *store.Store, teamID, restoreID string) error {
	return q.enqueue()(ctx, tx, RestoreArgs{TeamID: teamID, RestoreID: restoreID})
}
