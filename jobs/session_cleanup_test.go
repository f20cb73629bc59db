package jobs_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

type testBundle struct {
	ctx     context.Context
	st      *store.Store
	workers *river.Workers
	user    store.User
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx := context.Background()
	st := storetest.NewSchema(t) // River clients need committed rows and their own connections
	workers := river.NewWorkers()
	if err := jobs.Register(workers, jobs.Deps{Store: st, Logger: slog.New(slog.DiscardHandler)}); err != nil {
		t.Fatal(err)
	}
	user, err := st.CreateUser(ctx, "jobs@example.com", "Jobs", "hash")
	if err != nil {
		t.Fatal(err)
	}
	return &testBundle{ctx: ctx, st: st, workers: workers, user: user}
}

func (b *testBundle) session(t *testing.T, expires time.Time) []byte {
	t.Helper()
	id := make([]byte, 32)
	_, _ = rand.Read(id)
	if _, err := b.st.CreateSession(b.ctx, store.Session{
		ID: id, UserID: b.user.ID, CSRFSecret: bytes.Repeat([]byte{1}, 32), ExpiresAt: expires,
	}); err != nil {
		t.Fatal(err)
	}
	return id
}

// startWorker runs a working client until the test ends and returns the
// channel of completed or failed jobs.
func (b *testBundle) startWorker(t *testing.T) (*jobs.Client, <-chan *river.Event) {
	t.Helper()
	client, err := jobs.NewClient(b.st.Pool(), b.workers, jobs.Config{Work: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	events, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	t.Cleanup(cancel)
	if err := client.Start(b.ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		if err := client.Stop(ctx); err != nil {
			t.Errorf("stop river client: %v", err)
		}
	})
	return client, events
}

func waitFor(t *testing.T, events <-chan *river.Event, kind string) *river.Event {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.Job.Kind != kind {
				continue
			}
			if ev.Kind != river.EventKindJobCompleted {
				t.Fatalf("job %s failed: %+v", kind, ev.Job.Errors)
			}
			return ev
		case <-timeout:
			t.Fatalf("no %s job completed within 30s", kind)
		}
	}
}

func TestSessionCleanupWorker_Work(t *testing.T) {
	t.Parallel()
	b := setup(t)
	expired := b.session(t, time.Now().Add(-time.Minute))
	live := b.session(t, time.Now().Add(time.Hour))

	// An insert-only client (serve) enqueues inside a store transaction.
	inserter, err := jobs.NewClient(b.st.Pool(), b.workers, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	err = b.st.WithTx(b.ctx, func(tx *store.Store) error {
		_, err := inserter.InsertTx(b.ctx, tx.Tx(), jobs.SessionCleanupArgs{}, nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	_, events := b.startWorker(t)
	waitFor(t, events, jobs.SessionCleanupArgs{}.Kind())

	if err := b.st.TouchSession(b.ctx, expired, time.Now().Add(time.Hour)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("expired session still there: %v", err)
	}
	var n int
	if err := b.st.Pool().QueryRow(b.ctx, `SELECT count(*) FROM sessions`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("sessions left = %d, %v; want 1", n, err)
	}
	if _, err := b.st.GetSignedIn(b.ctx, live); err != nil {
		t.Fatalf("live session deleted: %v", err)
	}
}

// The job is periodic and runs when a worker becomes leader, without
// anyone inserting it.
func TestNewClient_PeriodicSessionCleanup(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.session(t, time.Now().Add(-time.Minute))
	_, events := b.startWorker(t)
	waitFor(t, events, jobs.SessionCleanupArgs{}.Kind())
	var n int
	if err := b.st.Pool().QueryRow(b.ctx, `SELECT count(*) FROM sessions`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("sessions left = %d, %v; want 0", n, err)
	}
}

// A job inserted in a transaction that rolls back never exists.
func TestNewClient_InsertTxRollsBack(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inserter, err := jobs.NewClient(b.st.Pool(), b.workers, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err = b.st.WithTx(b.ctx, func(tx *store.Store) error {
		if _, err := inserter.InsertTx(b.ctx, tx.Tx(), jobs.SessionCleanupArgs{}, nil); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("WithTx = %v", err)
	}
	var n int
	if err := b.st.Pool().QueryRow(b.ctx, `SELECT count(*) FROM river_job`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("river_job rows = %d, %v; want 0", n, err)
	}
}

type unknownArgs struct{}

func (unknownArgs) Kind() string { return "not_registered" }

func TestRegister(t *testing.T) {
	t.Parallel()
	if err := jobs.Register(river.NewWorkers(), jobs.Deps{}); err == nil {
		t.Fatal("Register without a store succeeded")
	}
	b := setup(t)
	inserter, err := jobs.NewClient(b.st.Pool(), b.workers, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inserter.Insert(b.ctx, unknownArgs{}, nil); err == nil {
		t.Fatal("inserting an unregistered kind succeeded")
	}
}
