package chaos

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	dockerswarm "github.com/docker/docker/api/types/swarm"
	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/test/chaos/chaostest"
	"github.com/slipwayhq/slipway/test/summary"
)

// killSteps are the steps the deployment of workerKillManifest records, in
// the order it runs them: the job before any service rolls out (its
// service, api, depends on nothing), then api, then web, which depends on
// api. The job sleeps, so its step is
// long enough to be caught; capture, prepare, plan, routes and cleanup
// take milliseconds and are usually over before a poll sees them running.
var killSteps = []string{"capture", "prepare", "plan", "job:migrate", "rollout:api", "rollout:web", "routes", "cleanup"}

// TestWorkerKilledDuringEachStepResumes kills the worker with SIGKILL while
// each deployment step runs, one deployment (database, team, application)
// per step, starts another worker, and checks that the deployment
// completes, that the services run its spec and that its job ran exactly
// once. A step seen over before it was seen running is skipped, saying so.
func TestWorkerKilledDuringEachStepResumes(t *testing.T) {
	t.Parallel()
	bin := chaostest.Binary(t)
	web, job := swarmtest.Image(t, "web"), swarmtest.Image(t, "job")
	for _, step := range killSteps {
		t.Run(step, func(t *testing.T) {
			t.Parallel()
			killWorkerDuring(t, bin, web, job, step)
		})
	}
}

// workerKillManifest is an application of two services and a
// before-rollout job that takes a few seconds.
func workerKillManifest(id, web, job string) string {
	return fmt.Sprintf(`
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
command = ["/app", "--print", "migrated", "--sleep", "6"]
`, id, web, job)
}

// killWorkerDuring deploys workerKillManifest with a real worker, kills it
// once step is seen running, and checks that a second worker finishes the
// deployment without running anything twice.
func killWorkerDuring(t *testing.T, bin, web, job, step string) {
	ctx := context.Background()
	url, st := chaostest.Database(t)
	workers := river.NewWorkers()
	if err := jobs.Register(workers, jobs.Deps{Store: st}); err != nil {
		t.Fatal(err)
	}
	client, err := jobs.NewClient(st.Pool(), workers, jobs.Config{})
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
	res, err := service.ApplyManifest(ctx, st, actor, enqueue, []byte(workerKillManifest(id, web, job)), service.ApplyOptions{Deploy: true})
	if err != nil {
		t.Fatal(err)
	}
	dep := res.Deployments[0]
	// Registered before the workers start, so it runs once they are killed.
	swarmtest.RemoveOnCleanup(t, swarm.LabelEnv+"="+dep.EnvironmentID)

	deployment := func() (store.Deployment, *jobs.Step) {
		d, err := st.GetDeployment(ctx, team.ID, dep.ID)
		if err != nil {
			t.Fatal(err)
		}
		p, err := jobs.ParseProgress(d.Steps)
		if err != nil {
			t.Fatal(err)
		}
		return d, p.Find(step)
	}

	first := chaostest.StartWorker(t, bin, url, "worker-1")
	var over *jobs.Step
	chaostest.WaitFor(t, 3*time.Minute, "step "+step+" to run", func() bool {
		d, s := deployment()
		if s != nil && s.State != jobs.StepRunning {
			over = s
			return true
		}
		if s == nil && d.State.Terminal() {
			t.Fatalf("deployment finished (%s: %s) without step %s; steps %s", d.State, d.ErrorMessage, step, d.Steps)
		}
		return s != nil
	})
	if over != nil {
		took := "unknown time"
		if over.FinishedAt != nil {
			took = over.FinishedAt.Sub(over.StartedAt).String()
		}
		// Left to finish, so no Docker request of the worker is in flight
		// when the test's cleanup removes the environment.
		var d store.Deployment
		chaostest.WaitFor(t, 4*time.Minute, "the deployment to finish", func() bool {
			d, _ = deployment()
			return d.State.Terminal()
		})
		if d.State != store.StateSucceeded {
			t.Fatalf("deployment %s without a kill: %s %s\nsteps %s", d.State, d.ErrorCode, d.ErrorMessage, d.Steps)
		}
		t.Skipf("step %s was over (%s, in %s) before a poll saw it running; the worker was not killed during it", step, over.State, took)
	}
	first.Kill()
	_, atKill := deployment()
	during := atKill.State == jobs.StepRunning

	chaostest.StartWorker(t, bin, url, "worker-2")
	var final store.Deployment
	chaostest.WaitFor(t, 4*time.Minute, "the deployment to finish after the restart", func() bool {
		final, _ = deployment()
		return final.State.Terminal()
	})
	if final.State != store.StateSucceeded {
		t.Fatalf("deployment %s: %s %s\nsteps %s", final.State, final.ErrorCode, final.ErrorMessage, final.Steps)
	}
	if runs := jobRuns(t, st, team.ID, dep.ID); runs != 1 {
		t.Fatalf("the migrate job succeeded %d times, want exactly once", runs)
	}
	checkServicesRun(t, dep.EnvironmentID, dep.ID, map[string]uint64{"api": 1, "web": 3})
	if !during {
		t.Skipf("step %s ended (%s) between the poll and the kill: the deployment resumed, but the worker was not killed during the step", step, atKill.State)
	}
	summary.Fault(t, "worker SIGKILLed during "+step, "deployment %s resumed and succeeded, its job ran once", dep.ID)
}

// checkServicesRun checks what the environment holds on the Swarm: exactly
// the wanted services, each of the deployment's spec with its replicas
// running, and one job service that ran one task.
func checkServicesRun(t *testing.T, envID, deploymentID string, want map[string]uint64) {
	t.Helper()
	ctx := context.Background()
	cli := swarmtest.Client(t)
	services, err := cli.ServiceList(ctx, dockerswarm.ServiceListOptions{Filters: filters.NewArgs(filters.Arg("label", swarm.LabelEnv+"="+envID))})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	jobServices := 0
	for _, s := range services {
		labels := s.Spec.Labels
		tasks, err := cli.TaskList(ctx, dockerswarm.TaskListOptions{Filters: filters.NewArgs(filters.Arg("service", s.ID))})
		if err != nil {
			t.Fatal(err)
		}
		if labels[swarm.LabelJob] != "" {
			jobServices++
			if len(tasks) != 1 {
				t.Errorf("job service %s has %d tasks, want 1 (one run)", s.Spec.Name, len(tasks))
			}
			continue
		}
		name := labels[swarm.LabelService]
		if seen[name] {
			t.Errorf("service %s is on the Swarm twice", name)
		}
		seen[name] = true
		replicas, ok := want[name]
		if !ok {
			t.Errorf("unexpected service %s (%s)", name, s.Spec.Name)
			continue
		}
		if got := labels[swarm.LabelDeployment]; got != deploymentID {
			t.Errorf("service %s runs the spec of deployment %s, want %s", name, got, deploymentID)
		}
		running := uint64(0)
		for _, task := range tasks {
			if task.DesiredState == dockerswarm.TaskStateRunning && task.Status.State == dockerswarm.TaskStateRunning {
				running++
			}
		}
		if running != replicas {
			t.Errorf("service %s has %d running tasks, want %d", name, running, replicas)
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("service %s is not on the Swarm", name)
		}
	}
	if jobServices != 1 {
		t.Errorf("%d job services on the Swarm, want 1", jobServices)
	}
}
