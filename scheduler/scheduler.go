package scheduler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/notify"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

// Driver is the part of the Swarm driver runs use.
type Driver interface {
	RunJob(ctx context.Context, job swarm.JobSpec) (swarm.JobResult, error)
	RemoveRun(ctx context.Context, env swarm.EnvRef, runID string) error
}

// Currents computes what an environment runs (pipeline.Pipeline).
type Currents interface {
	CurrentOf(ctx context.Context, teamID, envID string) (pipeline.Current, error)
}

// Queue inserts the work a schedule starts, in the transaction of tx.
type Queue interface {
	RunJob(ctx context.Context, tx *store.Store, teamID, runID string) error
	Backup(ctx context.Context, tx *store.Store, teamID, backupID string) error
}

// Scheduler holds the dependencies of ticks and runs.
type Scheduler struct {
	Store    *store.Store
	Currents Currents
	Driver   Driver
	Queue    Queue
	Log      *slog.Logger
	// Notify tells the team's destinations of a failed run (job.failed),
	// in the transaction that records it; nil tells nobody.
	Notify *notify.Emitter
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// OutputLines and OutputBytes bound the output kept with a run: its last
// lines.
const (
	OutputLines = 100
	OutputBytes = 16 << 10
	// claimBatch is how many due schedules one tick claims.
	claimBatch = 100
)

// Errors the run records, as codes in its message.
const (
	CodeNotDeployed = "environment_not_deployed"
	CodeJobGone     = "job_not_scheduled"
)

func (s *Scheduler) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Tick claims the due schedules and queues one run of each. A schedule
// whose time passed several times while no worker ran is run once, and its
// next run is the first slot after now.
func (s *Scheduler) Tick(ctx context.Context) (int, error) {
	now := s.now().UTC()
	n := 0
	err := s.Store.WithTx(ctx, func(tx *store.Store) error {
		due, err := tx.ClaimDueSchedules(ctx, now, claimBatch)
		if err != nil {
			return err
		}
		for _, sc := range due {
			next := now.Add(time.Hour)
			if parsed, err := manifest.ParseSchedule(sc.Spec); err == nil {
				next = parsed.Next(now)
			}
			if err := tx.AdvanceSchedule(ctx, sc.TeamID, sc.ID, now, next); err != nil {
				return err
			}
			when := sc.NextRunAt
			if err := s.queue(ctx, tx, sc, &when); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// queue records the run of a schedule and queues it.
func (s *Scheduler) queue(ctx context.Context, tx *store.Store, sc store.Schedule, when *time.Time) error {
	switch sc.Kind {
	case store.ScheduleJob:
		run, err := tx.CreateJobRun(ctx, sc.TeamID, store.JobRunParams{ApplicationID: sc.ApplicationID, EnvironmentID: sc.EnvironmentID,
			Job: sc.Name, Origin: store.FromSchedule, ScheduledFor: when})
		if err != nil {
			return err
		}
		return s.Queue.RunJob(ctx, tx, sc.TeamID, run.ID)
	case store.ScheduleBackup:
		env, err := tx.GetEnvironment(ctx, sc.TeamID, sc.EnvironmentID)
		if err != nil {
			return err
		}
		kind, subject, _ := strings.Cut(sc.Subject, ":")
		b, err := tx.CreateBackup(ctx, sc.TeamID, store.BackupParams{ApplicationID: sc.ApplicationID, EnvironmentID: sc.EnvironmentID,
			EnvironmentName: env.Name, Kind: kind, Subject: subject, Name: sc.Name, Origin: store.FromSchedule})
		if err != nil {
			return err
		}
		return s.Queue.Backup(ctx, tx, sc.TeamID, b.ID)
	}
	return fmt.Errorf("schedule %s: unknown kind %q", sc.ID, sc.Kind)
}

// RunNow queues a run of a scheduled job by hand. The job must be one the
// environment's current deployment schedules.
func (s *Scheduler) RunNow(ctx context.Context, teamID, envID, job, actor string) (store.JobRun, error) {
	sc, err := s.Store.GetSchedule(ctx, teamID, envID, store.ScheduleJob, job)
	if err != nil {
		return store.JobRun{}, err
	}
	var run store.JobRun
	err = s.Store.WithTx(ctx, func(tx *store.Store) error {
		if run, err = tx.CreateJobRun(ctx, teamID, store.JobRunParams{ApplicationID: sc.ApplicationID, EnvironmentID: envID,
			Job: job, Origin: store.ByHand, Actor: actor}); err != nil {
			return err
		}
		return s.Queue.RunJob(ctx, tx, teamID, run.ID)
	})
	return run, err
}

// Run runs a queued job run to its end and records how it ended. Called
// again for a run already running (a worker restarted), it waits for the
// same Swarm run instead of starting another.
func (s *Scheduler) Run(ctx context.Context, teamID, runID string) error {
	run, err := s.Store.GetJobRun(ctx, teamID, runID)
	if err != nil {
		return err
	}
	if run.State != store.RunQueued && run.State != store.RunRunning {
		return nil
	}
	cur, err := s.Currents.CurrentOf(ctx, teamID, run.EnvironmentID)
	if errors.Is(err, store.ErrNotFound) {
		return s.finish(ctx, run, store.RunFailed, nil, "", CodeNotDeployed+": the environment has no successful deployment")
	}
	if err != nil {
		return err
	}
	var job swarm.JobSpec
	var concurrency string
	for i, j := range cur.Rendered.Spec.Jobs {
		if j.Name == run.Job && j.Scheduled() {
			concurrency = cur.Rendered.Spec.Jobs[i].Concurrency
			for _, spec := range cur.Desired.Scheduled {
				if spec.Job == run.Job {
					job = spec
				}
			}
		}
	}
	if job.Job == "" {
		return s.finish(ctx, run, store.RunFailed, nil, "", fmt.Sprintf("%s: the deployment running now has no scheduled job %q", CodeJobGone, run.Job))
	}
	if run.State == store.RunQueued {
		if skip, err := s.concurrency(ctx, cur, run, concurrency); err != nil || skip {
			return err
		}
	}
	rc := swarm.RunContext{TeamID: teamID, AppID: cur.App.ID, EnvID: cur.Env.ID, EnvShortID: store.ShortID(cur.Env.ID), RunID: run.ID}
	spec := swarm.ScheduledRun(job, rc)
	if err := s.Store.StartJobRun(ctx, teamID, run.ID, cur.Deployment.ID, spec.Spec.Name, s.now()); err != nil {
		return err
	}
	res, runErr := s.Driver.RunJob(ctx, spec)
	if swarm.IsDockerUnavailable(runErr) {
		return runErr // River retries; the next attempt resumes the same run
	}
	code := res.ExitCode
	state, msg := store.RunSucceeded, fmt.Sprintf("exit code %d", code)
	if runErr != nil {
		state, msg = store.RunFailed, runErr.Error()
	}
	if err := s.finish(ctx, run, state, &code, string(Tail(res.Output, OutputLines, OutputBytes)), msg); err != nil {
		return err
	}
	return s.Driver.RemoveRun(context.WithoutCancel(ctx), rc.Env(), run.ID)
}

// concurrency applies the job's policy to the runs still running: forbid
// skips this one, replace stops them.
func (s *Scheduler) concurrency(ctx context.Context, cur pipeline.Current, run store.JobRun, policy string) (skip bool, err error) {
	running, err := s.Store.RunningJobRuns(ctx, run.TeamID, run.EnvironmentID, run.Job, run.ID)
	if err != nil || len(running) == 0 {
		return false, err
	}
	if policy != manifest.ConcurrencyReplace {
		return true, s.finish(ctx, run, store.RunSkipped, nil, "", fmt.Sprintf("skipped: run %s is still running (concurrency forbid)", running[0].ID))
	}
	for _, old := range running {
		if err := s.Driver.RemoveRun(ctx, cur.EnvRef(), old.ID); err != nil {
			return false, err
		}
		err := s.finish(ctx, old, store.RunStopped, nil, "", fmt.Sprintf("stopped: replaced by run %s (concurrency replace)", run.ID))
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return false, err
		}
	}
	return false, nil
}

func (s *Scheduler) finish(ctx context.Context, run store.JobRun, state string, code *int, output, msg string) error {
	ctx = context.WithoutCancel(ctx)
	err := s.Store.WithTx(ctx, func(tx *store.Store) error {
		if err := tx.FinishJobRun(ctx, run.TeamID, run.ID, store.JobRunOutcome{State: state, ExitCode: code, Output: output, Message: msg, EndedAt: s.now()}); err != nil {
			return err
		}
		if state != store.RunFailed {
			return nil
		}
		return s.Notify.Emit(ctx, tx, notify.Event{Kind: notify.JobFailed, TeamID: run.TeamID, ApplicationID: run.ApplicationID,
			EnvironmentID: run.EnvironmentID, Job: run.Job, Message: msg, Key: string(notify.JobFailed) + ":" + run.ID})
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil // another worker recorded its end first (a replaced run)
	}
	return err
}

// Tail returns the last lines of out, at most maxLines lines and maxBytes
// bytes.
func Tail(out []byte, maxLines, maxBytes int) []byte {
	if len(out) > maxBytes {
		out = out[len(out)-maxBytes:]
		if i := bytes.IndexByte(out, '\n'); i >= 0 && i < len(out)-1 {
			out = out[i+1:]
		}
	}
	end := len(out)
	if end > 0 && out[end-1] == '\n' {
		end--
	}
	lines := 0
	for i := end - 1; i >= 0; i-- {
		if out[i] == '\n' {
			lines++
			if lines == maxLines {
				return bytes.ToValidUTF8(out[i+1:], nil)
			}
		}
	}
	return bytes.ToValidUTF8(out, nil)
}
