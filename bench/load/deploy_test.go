package load

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slipwayhq/slipway/app/api/client"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/test/chaos/chaostest"
	"github.com/slipwayhq/slipway/test/summary"
)

// rig is a database with serve and worker running against it.
type rig struct {
	pool *pgxpool.Pool
	st   *store.Store
	srv  *chaostest.Server
	envs *chaostest.EnvironmentCleanup
}

func newRig(tb testing.TB, extraEnv ...string) *rig {
	tb.Helper()
	bin := chaostest.Binary(tb)
	url, st := chaostest.Database(tb)
	r := &rig{pool: st.Pool(), st: st}
	// Before the processes start, so it runs after they are killed.
	r.envs = chaostest.Environments(tb)
	r.srv = chaostest.StartServe(tb, bin, url, extraEnv...)
	chaostest.StartWorker(tb, bin, url, "worker", extraEnv...)
	return r
}

// percentile returns the q-quantile of sorted durations.
func percentile(sorted []time.Duration, q float64) time.Duration {
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

// deployMany has teams teams apply and deploy apps applications (spread
// evenly) at once through the API, waits for every deployment to end, and
// fails unless all succeeded and nothing is left in a non-final state. It
// returns the completion times (request to finished) and the wall time.
func deployMany(tb testing.TB, teams, apps int) ([]time.Duration, time.Duration) {
	tb.Helper()
	ctx := context.Background()
	r := newRig(tb)
	web := swarmtest.Image(tb, "web")
	id := swarmtest.ID()
	clients := make([]*client.Client, teams)
	for i := range teams {
		clients[i] = chaostest.NewTeam(tb, r.st, fmt.Sprintf("%s-%d", id, i)).Client(tb, r.srv)
	}
	type result struct {
		took time.Duration
		err  error
	}
	results := make([]result, apps)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range apps {
		wg.Go(func() {
			c := clients[i%teams]
			t0 := time.Now()
			res, err := c.Apply(ctx, fmt.Appendf(nil, `api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = "load-%s-%d"

[[spec.services]]
name = "web"
[spec.services.source]
type = "image"
image = %q
[spec.services.healthcheck]
type = "http"
port = 8080
interval_seconds = 2
timeout_seconds = 2
start_period_seconds = 30
retries = 5
`, id, i, web), client.ApplyOptions{Deploy: true})
			if err != nil {
				results[i].err = fmt.Errorf("app %d: apply: %w", i, err)
				return
			}
			dep := res.Deployments[0]
			r.envs.Add(dep.EnvironmentID)
			deadline := time.Now().Add(10 * time.Minute)
			for {
				d, err := c.Deployment(ctx, dep.ID)
				switch {
				case err != nil:
					results[i].err = fmt.Errorf("app %d: %w", i, err)
					return
				case d.Terminal && d.State != string(store.StateSucceeded):
					results[i].err = fmt.Errorf("app %d: deployment %s: %s %s", i, d.State, d.ErrorCode, d.ErrorMessage)
					return
				case d.Terminal:
					results[i].took = time.Since(t0)
					return
				case time.Now().After(deadline):
					results[i].err = fmt.Errorf("app %d: deployment still %s after 10 minutes", i, d.State)
					return
				}
				time.Sleep(500 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	var took []time.Duration
	for _, res := range results {
		if res.err != nil {
			tb.Error(res.err)
			continue
		}
		took = append(took, res.took)
	}
	if tb.Failed() {
		tb.FailNow()
	}
	// Nothing left behind: no deployment and no deploy job is live.
	var live, liveJobs int
	if err := r.pool.QueryRow(ctx, `SELECT count(*) FROM deployments
		WHERE state NOT IN ('succeeded', 'failed', 'cancelled', 'superseded')`).Scan(&live); err != nil {
		tb.Fatal(err)
	}
	// River records a job's completion shortly after the worker returns
	// (its completer batches), so a job may still read running for a
	// moment after its deployment ended; it must not stay so.
	for deadline := time.Now().Add(30 * time.Second); ; {
		if err := r.pool.QueryRow(ctx, `SELECT count(*) FROM river_job
			WHERE kind = 'deploy' AND state NOT IN ('completed', 'cancelled', 'discarded')`).Scan(&liveJobs); err != nil {
			tb.Fatal(err)
		}
		if liveJobs == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if live != 0 || liveJobs != 0 {
		tb.Fatalf("after every deployment ended: %d deployments and %d deploy jobs still live", live, liveJobs)
	}
	slices.Sort(took)
	fmt.Printf("bench/load: %d applications by %d teams deployed concurrently through the API in %s (%.2f deployments/s): completion p50 %s, p99 %s, max %s; all succeeded, none stuck\n",
		apps, teams, wall.Round(time.Millisecond), float64(apps)/wall.Seconds(),
		percentile(took, 0.5).Round(time.Millisecond), percentile(took, 0.99).Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))
	return took, wall
}

// TestLoadDeployments is the short form `make test` runs: 10 applications
// by 5 teams.
func TestLoadDeployments(t *testing.T) {
	t.Parallel()
	took, wall := deployMany(t, 5, 10)
	summary.Line(t, "load: 10 applications by 5 teams deployed concurrently, 10 succeeded, 0 stuck (wall %s, p99 %s)",
		wall.Round(time.Second), percentile(took, 0.99).Round(time.Second))
}

// BenchmarkLoadDeployments is the full form: 50 applications by 10 teams.
func BenchmarkLoadDeployments(b *testing.B) {
	for b.Loop() {
		took, wall := deployMany(b, 10, 50)
		b.ReportMetric(float64(50)/wall.Seconds(), "deploys/s")
		b.ReportMetric(percentile(took, 0.99).Seconds(), "p99_s")
	}
}
