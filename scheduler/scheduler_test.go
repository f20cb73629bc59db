package scheduler_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/pipeline/pipelinetest"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/scheduler"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// queue records what the scheduler queues.
type queue struct {
	mu      sync.Mutex
	runs    []string
	backups []string
}

func (q *queue) RunJob(_ context.Context, _ *store.Store, _, id string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.runs = append(q.runs, id)
	return nil
}

func (q *queue) Backup(_ context.Context, _ *store.Store, _, id string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.backups = append(q.backups, id)
	return nil
}

func (q *queue) queued() ([]string, []string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.runs...), append([]string(nil), q.backups...)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestTick_MissedSlotsRunOnce: a worker back after five hourly slots
// passed runs the job once, and its next run is the first slot after now;
// a scheduled backup is queued with what it copies.
func TestTick_MissedSlotsRunOnce(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	tn := storetest.NewTenant(t, st, "tick", "notes")
	t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	must(t, st.SetEnvironmentSchedules(t.Context(), tn.Team.ID, tn.App.ID, tn.Env.ID, "dep_1", []store.ScheduleParams{
		{Kind: store.ScheduleJob, Name: "report", Spec: "@hourly", NextRunAt: t0},
		{Kind: store.ScheduleBackup, Name: "db", Spec: "@daily", Subject: "postgres:db", NextRunAt: t0.Add(14 * time.Hour)},
	}))
	now := t0.Add(5*time.Hour + 30*time.Minute)
	q := &queue{}
	s := &scheduler.Scheduler{Store: st, Queue: q, Now: func() time.Time { return now }}
	n, err := s.Tick(t.Context())
	must(t, err)
	if n != 1 {
		t.Fatalf("tick queued %d runs, want 1", n)
	}
	n, err = s.Tick(t.Context())
	must(t, err)
	if n != 0 {
		t.Fatalf("a second tick at the same time queued %d runs", n)
	}
	runs, _ := q.queued()
	run, err := st.GetJobRun(t.Context(), tn.Team.ID, runs[0])
	must(t, err)
	if run.Job != "report" || run.Origin != store.FromSchedule || run.ScheduledFor == nil || !run.ScheduledFor.Equal(t0) {
		t.Errorf("run = %+v", run)
	}
	sc, err := st.GetSchedule(t.Context(), tn.Team.ID, tn.Env.ID, store.ScheduleJob, "report")
	must(t, err)
	if want := t0.Add(6 * time.Hour); !sc.NextRunAt.Equal(want) {
		t.Errorf("next run %s, want %s", sc.NextRunAt, want)
	}

	now = t0.Add(24 * time.Hour)
	_, err = s.Tick(t.Context())
	must(t, err)
	_, backups := q.queued()
	if len(backups) != 1 {
		t.Fatalf("backups queued: %v", backups)
	}
	b, err := st.GetBackup(t.Context(), tn.Team.ID, backups[0])
	must(t, err)
	if b.Kind != "postgres" || b.Subject != "db" || b.Name != "db" || b.Origin != store.FromSchedule || b.State != store.BackupPending {
		t.Errorf("backup = %+v", b)
	}
}

func TestTail(t *testing.T) {
	t.Parallel()
	var sb strings.Builder
	for i := range 150 {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	got := string(scheduler.Tail([]byte(sb.String()), 100, 1<<20))
	if !strings.HasPrefix(got, "line 50\n") || !strings.HasSuffix(got, "line 149\n") {
		t.Errorf("tail = %q...", got[:20])
	}
	if got := string(scheduler.Tail([]byte("aaaa\nbbbb\ncccc\n"), 100, 7)); got != "cccc\n" {
		t.Errorf("byte-bounded tail = %q", got)
	}
}

const schedManifest = `
api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = "sched"
[[spec.services]]
name = "worker"
command = ["/app", "--sleep", "3600"]
[spec.services.source]
type = "image"
image = %[1]q
[spec.services.environment]
WHO = "worker"
[[spec.jobs]]
name = "tick"
service = "worker"
command = ["/app", "--env", "WHO,EXTRA", "--print", "tick ran"]
schedule = "* * * * *"
[spec.jobs.environment]
EXTRA = "job only"
[[spec.jobs]]
name = "slow"
service = "worker"
command = ["/app", "--print", "slow started", "--sleep", "40"]
schedule = "0 0 1 1 *"
concurrency = "forbid"
`

// TestRun_AtItsMinuteWithOutput: deploying records the schedule; the
// tick at its minute queues a run, which runs on the real Swarm from the
// deployment's image and environment and records its output and exit
// code. A second run of a job while one runs is skipped under forbid.
func TestRun_AtItsMinuteWithOutput(t *testing.T) {
	t.Parallel()
	b := pipelinetest.Setup(t, "production")
	q := &queue{}
	s := &scheduler.Scheduler{Store: b.Store, Currents: b.Pipeline, Driver: b.Driver, Queue: q}
	pipelinetest.ExpectState(t, b.Deploy(t, fmt.Sprintf(schedManifest, swarmtest.Image(t, "job"))), store.StateSucceeded)
	sc, err := b.Store.GetSchedule(t.Context(), b.Team.ID, b.Env.ID, store.ScheduleJob, "tick")
	must(t, err)
	minute := sc.NextRunAt
	if minute.Second() != 0 || minute.Before(time.Now()) || minute.After(time.Now().Add(time.Minute)) {
		t.Fatalf("next run %s is not the coming minute", minute)
	}
	// Tick as the periodic job does, until the minute comes.
	deadline := time.Now().Add(3 * time.Minute)
	for len(q.runs) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no run queued after its minute")
		}
		if _, err := s.Tick(t.Context()); err != nil {
			t.Fatal(err)
		}
		runs, _ := q.queued()
		if len(runs) > 0 {
			break
		}
		time.Sleep(time.Second)
	}
	runs, _ := q.queued()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	must(t, s.Run(ctx, b.Team.ID, runs[0]))
	run, err := b.Store.GetJobRun(t.Context(), b.Team.ID, runs[0])
	must(t, err)
	if run.State != store.RunSucceeded || run.ExitCode == nil || *run.ExitCode != 0 {
		t.Fatalf("run = %+v", run)
	}
	if run.StartedAt == nil || run.StartedAt.Before(minute) || !run.ScheduledFor.Equal(minute) {
		t.Errorf("run scheduled for %v started %v, minute %v", run.ScheduledFor, run.StartedAt, minute)
	}
	for _, want := range []string{"WHO=worker", "EXTRA=job only", "tick ran"} {
		if !strings.Contains(run.Output, want) {
			t.Errorf("output %q lacks %q", run.Output, want)
		}
	}
	// The run's service is gone; the environment's services stay.
	if len(b.ServicesOf(t, b.Env.ID)) != 1 {
		t.Errorf("services after the run: %d", len(b.ServicesOf(t, b.Env.ID)))
	}

	// forbid: the second run of slow while the first runs is skipped.
	first, err := s.RunNow(t.Context(), b.Team.ID, b.Env.ID, "slow", "test")
	must(t, err)
	firstCtx, stopFirst := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(firstCtx, b.Team.ID, first.ID) }()
	t.Cleanup(func() { stopFirst(); <-done })
	for {
		r, err := b.Store.GetJobRun(t.Context(), b.Team.ID, first.ID)
		must(t, err)
		if r.State == store.RunRunning {
			break
		}
		if r.State != store.RunQueued {
			t.Fatalf("first slow run %s: %s", r.State, r.Message)
		}
		time.Sleep(200 * time.Millisecond)
	}
	second, err := s.RunNow(t.Context(), b.Team.ID, b.Env.ID, "slow", "test")
	must(t, err)
	must(t, s.Run(t.Context(), b.Team.ID, second.ID))
	second, err = b.Store.GetJobRun(t.Context(), b.Team.ID, second.ID)
	must(t, err)
	if second.State != store.RunSkipped || !strings.Contains(second.Message, first.ID) || second.StartedAt != nil {
		t.Fatalf("second run = %s %q", second.State, second.Message)
	}
}
