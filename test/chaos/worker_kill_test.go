package chaos

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/test/chaos/chaostest"
	"github.com/slipwayhq/slipway/test/summary"
)

// TestWorkerKilledMidRolloutResumes kills the worker with SIGKILL while a
// deployment rolls out, starts another worker, and checks that the
// deployment completes and that its job ran exactly once.
func TestWorkerKilledMidRolloutResumes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bin := chaostest.Binary(t)
	url, st := chaostest.Database(t)
	pool := st.Pool()
	workers := river.NewWorkers()
	if err := jobs.Register(workers, jobs.Deps{Store: st}); err != nil {
		t.Fatal(err)
	}
	client, err := jobs.NewClient(pool, workers, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	enqueue := func(ctx context.Context, tx *store.Store, args river.JobArgs) error {
		_, err := client.InsertTx(ctx, tx.Tx(), args, nil)
		return err
	}

	id := swarmtest.ID()
	team, err := st.CreateTeam(ctx, "Chaos "+id, "chaos-"+id)
	if err != nil {
		t.Fatal(err)
	}
	actor := service.Actor{TeamID: team.ID, UserID: "usr_chaos"}
	web, job := swarmtest.Image(t, "web"), swarmtest.Image(t, "job")
	doc := fmt.Sprintf(`
api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = "chaos-%s"

[[spec.services]]
name = "web"
replicas = 3
depends_on = ["api"]
[spec.services.source]
type = "image"
image = %q
[spec.services.healthcheck]
type = "http"
port = 8080
interval_seconds = 2
timeout_seconds = 1
start_period_seconds = 2

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
`, id, web, job)
	res, err := service.ApplyManifest(ctx, st, actor, enqueue, []byte(doc), service.ApplyOptions{Deploy: true})
	if err != nil {
		t.Fatal(err)
	}
	dep := res.Deployments[0]
	env, err := st.GetEnvironment(ctx, team.ID, dep.EnvironmentID)
	if err != nil {
		t.Fatal(err)
	}
	// Registered before the workers start, so it runs once they are killed.
	swarmtest.RemoveOnCleanup(t, swarm.LabelEnv+"="+env.ID)

	first := chaostest.StartWorker(t, bin, url, "worker-1")
	chaostest.WaitFor(t, 3*time.Minute, "the deployment to roll out web", func() bool {
		d, err := st.GetDeployment(ctx, team.ID, dep.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d.State.Terminal() {
			t.Fatalf("deployment finished (%s: %s) before the worker could be killed", d.State, d.ErrorMessage)
		}
		p, _ := jobs.ParseProgress(d.Steps)
		s := p.Find("rollout:web")
		return d.State == store.StateRollingOut && s != nil && s.State == jobs.StepRunning
	})
	first.Kill()

	chaostest.StartWorker(t, bin, url, "worker-2")
	var final store.Deployment
	chaostest.WaitFor(t, 4*time.Minute, "the deployment to finish after the restart", func() bool {
		final, err = st.GetDeployment(ctx, team.ID, dep.ID)
		if err != nil {
			t.Fatal(err)
		}
		return final.State.Terminal()
	})
	if final.State != store.StateSucceeded {
		t.Fatalf("deployment %s: %s %s\nsteps %s", final.State, final.ErrorCode, final.ErrorMessage, final.Steps)
	}
	runs := jobRuns(t, st, team.ID, dep.ID)
	if runs != 1 {
		t.Fatalf("the migrate job succeeded %d times, want exactly once", runs)
	}
	summary.Fault(t, "worker SIGKILLed mid-rollout", "deployment %s resumed and succeeded, its job ran once", dep.ID)
}
