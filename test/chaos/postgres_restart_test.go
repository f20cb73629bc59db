package chaos

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slipwayhq/slipway/app/api/client"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/localpg"
	"github.com/slipwayhq/slipway/test/chaos/chaostest"
	"github.com/slipwayhq/slipway/test/summary"
)

// privateCluster starts a Postgres cluster of the test's own (the shared
// test cluster must never be restarted), in a directory the postgres user
// can reach, removed when the test ends.
func privateCluster(t *testing.T, ctx context.Context, dir string) *localpg.Cluster {
	t.Helper()
	c, err := localpg.Start(ctx, dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPostgresRestartedMidDeployment runs serve and worker against a
// private Postgres cluster, restarts the cluster while a deployment rolls
// out, and checks that nothing is lost: the deployment finishes by itself,
// either succeeded (its job ran once) or failed with an error code, in
// which case a new deployment through the API succeeds; and serve answers
// again without a restart.
func TestPostgresRestartedMidDeployment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bin := chaostest.Binary(t)
	dir, err := os.MkdirTemp("", "slw-pgr-")
	if err != nil {
		t.Fatal(err)
	}
	// Postgres runs as the postgres user when we are root.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cluster := privateCluster(t, ctx, dir)
	t.Cleanup(func() { _ = cluster.Stop(context.Background()) })
	url := cluster.URL()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := store.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	st := store.New(pool)
	id := swarmtest.ID()
	team := chaostest.NewTeam(t, st, id)
	// Before the processes start, so it runs after they are killed.
	envs := chaostest.Environments(t)
	srv := chaostest.StartServe(t, bin, url)
	chaostest.StartWorker(t, bin, url, "worker")
	c := team.Client(t, srv)

	web, job := swarmtest.Image(t, "web"), swarmtest.Image(t, "job")
	app := "pgr-" + id
	doc := fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[[spec.services]]
name = "web"
replicas = 2
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

[[spec.services]]
name = "api"
command = ["/app", "--sleep", "3600"]
[spec.services.source]
type = "image"
image = %q

[[spec.jobs]]
name = "migrate"
service = "api"
command = ["/app", "--print", "migrated"]
`, app, web, job)
	res, err := c.Apply(ctx, []byte(doc), client.ApplyOptions{Deploy: true})
	if err != nil {
		t.Fatal(err)
	}
	dep := res.Deployments[0]
	envs.Add(dep.EnvironmentID)

	chaostest.WaitFor(t, 3*time.Minute, "the deployment to roll out", func() bool {
		d, err := st.GetDeployment(ctx, team.Team.ID, dep.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d.State.Terminal() {
			t.Fatalf("deployment finished (%s: %s) before Postgres could be restarted", d.State, d.ErrorMessage)
		}
		return d.State == store.StateRollingOut
	})
	stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err = cluster.Stop(stopCtx)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	// Down long enough for the worker's and serve's queries to fail.
	time.Sleep(5 * time.Second)
	cluster = privateCluster(t, ctx, dir)
	t.Cleanup(func() { _ = cluster.Stop(context.Background()) })

	var final store.Deployment
	chaostest.WaitFor(t, 4*time.Minute, "the deployment to finish after the restart", func() bool {
		final, err = st.GetDeployment(ctx, team.Team.ID, dep.ID)
		return err == nil && final.State.Terminal()
	})
	outcome := "it succeeded"
	switch final.State {
	case store.StateSucceeded:
		if runs := jobRuns(t, st, team.Team.ID, dep.ID); runs != 1 {
			t.Fatalf("the migrate job succeeded %d times, want once", runs)
		}
	case store.StateFailed:
		if final.ErrorCode == "" {
			t.Fatalf("deployment failed without an error code: %s", final.ErrorMessage)
		}
		// Failed cleanly: the same request again must go through.
		again, err := c.Deploy(ctx, app, "production")
		if err != nil {
			t.Fatal(err)
		}
		if state, code, msg := chaostest.WaitDeployment(t, c, again.ID, 4*time.Minute); state != string(store.StateSucceeded) {
			t.Fatalf("redeploy after the restart: %s %s %s", state, code, msg)
		}
		outcome = fmt.Sprintf("it failed cleanly (%s) and a redeploy succeeded", final.ErrorCode)
	default:
		t.Fatalf("deployment ended %s: %s %s", final.State, final.ErrorCode, final.ErrorMessage)
	}
	// Nothing is left half-way: no deployment of the team is live.
	deps, err := c.Deployments(ctx, app, "production")
	if err != nil {
		t.Fatalf("serve after the restart: %v", err)
	}
	for _, d := range deps {
		if !d.Terminal {
			t.Fatalf("deployment %s still %s", d.ID, d.State)
		}
	}
	// How the worker got through it: River retries and lease resumes.
	var jobsRun, attempts int
	if err := pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(attempt), 0) FROM river_job
		WHERE kind = 'deploy' AND args->>'deployment_id' = $1`, dep.ID).Scan(&jobsRun, &attempts); err != nil {
		t.Fatal(err)
	}
	summary.Fault(t, "Postgres restarted mid-rollout", "deployment %s: %s after %d deploy job(s), %d attempt(s); serve and worker reconnected",
		dep.ID, outcome, jobsRun, attempts)
}

// jobRuns counts the deployment's job.succeeded events.
func jobRuns(t *testing.T, st *store.Store, teamID, deploymentID string) int {
	t.Helper()
	events, err := st.ListEvents(context.Background(), teamID, store.EventFilter{ObjectType: "deployment", ObjectID: deploymentID, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	for _, e := range events {
		if e.Verb == "job.succeeded" {
			runs++
		}
	}
	return runs
}
