package metrics_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/slipwayhq/slipway/metrics"
	"github.com/slipwayhq/slipway/store/storetest"
)

type probeArgs struct{}

func (probeArgs) Kind() string { return "metrics_probe" }

// queueDepth is how a process with a pool wires WatchQueue.
func queueDepth(pool *pgxpool.Pool) metrics.QueueDepthFunc {
	return func(ctx context.Context) (map[[2]string]int64, error) {
		rows, err := pool.Query(ctx, metrics.QueueDepthQuery)
		if err != nil {
			return nil, fmt.Errorf("river queue depth: %w", err)
		}
		defer rows.Close()
		out := map[[2]string]int64{}
		for rows.Next() {
			var queue, state string
			var n int64
			if err := rows.Scan(&queue, &state, &n); err != nil {
				return nil, fmt.Errorf("river queue depth: %w", err)
			}
			out[[2]string{queue, state}] = n
		}
		return out, rows.Err()
	}
}

// TestQueueDepthQuery runs the query against River's real schema.
func TestQueueDepthQuery(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool, err := pgxpool.New(ctx, storetest.NewDatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []*river.InsertOpts{
		{Queue: "default"},
		{Queue: "default"},
		{Queue: "builds"},
		{Queue: "builds", ScheduledAt: time.Now().Add(time.Hour)},
	} {
		if _, err := client.Insert(ctx, probeArgs{}, opts); err != nil {
			t.Fatal(err)
		}
	}

	r := metrics.New(nil)
	r.WatchQueue(queueDepth(pool), 5*time.Second)
	// Every known state of both queues, zero included.
	var b strings.Builder
	b.WriteString("# HELP slipway_river_jobs River jobs by queue and state, read from river_job at scrape time.\n# TYPE slipway_river_jobs gauge\n")
	counts := map[string]int{"default/available": 2, "builds/available": 1, "builds/scheduled": 1}
	for _, q := range []string{"builds", "default"} {
		for _, s := range []string{"available", "cancelled", "completed", "discarded", "pending", "retryable", "running", "scheduled"} {
			fmt.Fprintf(&b, "slipway_river_jobs{queue=%q,state=%q} %d\n", q, s, counts[q+"/"+s])
		}
	}
	if err := testutil.GatherAndCompare(r.Gatherer(), strings.NewReader(b.String()), "slipway_river_jobs"); err != nil {
		t.Error(err)
	}
}

// TestRiverMiddleware_RealClient works a job through a real River client
// with the middleware installed.
func TestRiverMiddleware_RealClient(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool, err := pgxpool.New(ctx, storetest.NewDatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	r := metrics.New(nil)
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(context.Context, *river.Job[probeArgs]) error { return nil }))
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Queues:     map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}},
		Workers:    workers,
		Middleware: []rivertype.Middleware{r.RiverMiddleware()},
		Logger:     slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	events, cancel := client.Subscribe(river.EventKindJobCompleted)
	defer cancel()
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(stopCtx)
	})
	if _, err := client.Insert(ctx, probeArgs{}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-events:
	case <-time.After(30 * time.Second):
		t.Fatal("the job did not complete")
	}
	for _, name := range []string{"slipway_job_duration_seconds", "slipway_job_latency_seconds"} {
		if n, err := testutil.GatherAndCount(r.Gatherer(), name); err != nil || n != 1 {
			t.Errorf("%s: %d series, %v; want the one attempt", name, n, err)
		}
	}
}
