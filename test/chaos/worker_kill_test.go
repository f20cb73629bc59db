package chaos

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	dockerswarm "github.com/docker/docker/api/types/swarm"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/test/chaos/chaostest"
	"github.com/slipwayhq/slipway/test/summary"
)

// killSteps are the steps the deployment of workerKillManifest records, in
// the order it runs them: the job before any service rolls out (its
// service, api, depends on nothing), then api, then web, which depends on
// api.
var killSteps = []string{"capture", "prepare", "plan", "job:migrate", "rollout:api", "rollout:web", "routes", "cleanup"}

// longSteps last seconds (the job sleeps, the rollouts wait for health),
// long enough for a poll to see them running and kill the worker halfway.
// The others take milliseconds.
var longSteps = map[string]bool{"job:migrate": true, "rollout:api": true, "rollout:web": true}

// TestWorkerKilledDuringEachStepResumes kills the worker with SIGKILL
// during each deployment step, one deployment (database, team,
// application) per case, starts another worker, and checks that the
// deployment completes, that the services run its spec and that its job
// ran exactly once.
//
// Every step is killed at its riskiest moment: its work is done but its
// end is not recorded, so the next worker finds it still running and must
// redo it without doing anything twice. A trigger in the test's own
// database holds the write that records the step's end until the worker
// is killed, and the write dies with it. The long steps are also killed
// halfway, once a poll sees them running.
func TestWorkerKilledDuringEachStepResumes(t *testing.T) {
	t.Parallel()
	bin := chaostest.Binary(t)
	web, job := swarmtest.Image(t, "web"), swarmtest.Image(t, "job")
	for _, step := range killSteps {
		t.Run(step+"/end", func(t *testing.T) {
			t.Parallel()
			killWorkerDuring(t, bin, web, job, step, true)
		})
		if longSteps[step] {
			t.Run(step+"/midway", func(t *testing.T) {
				t.Parallel()
				killWorkerDuring(t, bin, web, job, step, false)
			})
		}
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
command = ["/app", "--print", "migrated", "--sleep", "6"]
`, id, web, job)
}

// killWorkerDuring deploys workerKillManifest with a real worker, kills it
// during step (atEnd: as the step's end is being recorded; otherwise once
// a poll sees it running) and checks that a second worker finishes the
// deployment without running anything twice.
func killWorkerDuring(t *testing.T, bin, web, job, step string, atEnd bool) {
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

	deployment := func() (store.Deployment, *pipeline.Step) {
		d, err := st.GetDeployment(ctx, team.ID, dep.ID)
		if err != nil {
			t.Fatal(err)
		}
		p, err := pipeline.ParseProgress(d.Steps)
		if err != nil {
			t.Fatal(err)
		}
		return d, p.Find(step)
	}
	unfinished := func() {
		if d, s := deployment(); s == nil && d.State.Terminal() {
			t.Fatalf("deployment finished (%s: %s) without step %s; steps %s", d.State, d.ErrorMessage, step, d.Steps)
		}
	}

	var during bool
	var moment string
	if atEnd {
		hold := holdStepEnd(t, url, step)
		first := chaostest.StartWorker(t, bin, url, "worker-1")
		pid := hold.waitBlocked(t, unfinished)
		first.Kill()
		hold.release(t, pid)
		_, s := deployment()
		if s == nil || s.State != pipeline.StepRunning {
			t.Fatalf("step %s after the kill: %+v, want it recorded as running", step, s)
		}
		during, moment = true, "as "+step+"'s end was being recorded"
	} else {
		first := chaostest.StartWorker(t, bin, url, "worker-1")
		var over *pipeline.Step
		chaostest.WaitFor(t, 3*time.Minute, "step "+step+" to run", func() bool {
			unfinished()
			_, s := deployment()
			if s != nil && s.State != pipeline.StepRunning {
				over = s
			}
			return s != nil
		})
		if over != nil {
			t.Fatalf("step %s was over (%s) before a poll saw it running: it is not a long step", step, over.State)
		}
		first.Kill()
		_, atKill := deployment()
		during, moment = atKill.State == pipeline.StepRunning, "during "+step
	}

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
		t.Skipf("step %s ended between the poll and the kill: the deployment resumed, but the worker was not killed during the step", step)
	}
	summary.Fault(t, "worker SIGKILLed "+moment, "deployment %s resumed and succeeded, its job ran once", dep.ID)
}

// stepEndHoldKey is the advisory lock a stepEndHold takes; each test has
// a database of its own, so one key serves them all.
const stepEndHoldKey = 71401

// stepEndHold makes the worker block, inside the write that records a
// step's end, on an advisory lock the test holds.
type stepEndHold struct {
	conn *pgx.Conn
}

// holdStepEnd installs, in the test's own database, a trigger that makes
// the update recording step's end wait for the lock, and takes the lock.
func holdStepEnd(t *testing.T, url, step string) *stepEndHold {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	ended := `jsonb_path_exists(%s.steps, '$[*] ? (@.name == $s && @.state != "running")', jsonb_build_object('s', TG_ARGV[0]))`
	stmts := []string{
		`CREATE FUNCTION chaos_hold_step_end() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF ` + fmt.Sprintf(ended, "NEW") + ` AND NOT ` + fmt.Sprintf(ended, "OLD") + ` THEN
				PERFORM pg_advisory_xact_lock(TG_ARGV[1]::bigint);
			END IF;
			RETURN NEW;
		END $$`,
		fmt.Sprintf(`CREATE TRIGGER chaos_hold_step_end BEFORE UPDATE OF steps ON deployments
			FOR EACH ROW EXECUTE FUNCTION chaos_hold_step_end('%s', '%d')`, step, stepEndHoldKey),
		fmt.Sprintf(`SELECT pg_advisory_lock(%d)`, stepEndHoldKey),
	}
	for _, q := range stmts {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return &stepEndHold{conn: conn}
}

// waitBlocked waits for a session to wait on the lock and returns its
// backend's pid; check fails the test early when waiting is pointless.
func (h *stepEndHold) waitBlocked(t *testing.T, check func()) (pid int32) {
	t.Helper()
	chaostest.WaitFor(t, 3*time.Minute, "the worker to record the step's end", func() bool {
		check()
		err := h.conn.QueryRow(context.Background(), `
			SELECT pid FROM pg_locks
			WHERE locktype = 'advisory' AND NOT granted AND objid = $1
			  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
			LIMIT 1`, stepEndHoldKey).Scan(&pid)
		if errors.Is(err, pgx.ErrNoRows) {
			return false
		}
		if err != nil {
			t.Fatal(err)
		}
		return true
	})
	return pid
}

// release ends the killed worker's blocked session, as Postgres would
// once it noticed the connection was gone, so its write is lost; then it
// removes the trigger and lets go of the lock.
func (h *stepEndHold) release(t *testing.T, pid int32) {
	t.Helper()
	ctx := context.Background()
	if _, err := h.conn.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	chaostest.WaitFor(t, 30*time.Second, "the killed worker's session to end", func() bool {
		var n int
		if err := h.conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE pid = $1`, pid).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 0
	})
	for _, q := range []string{
		`DROP TRIGGER chaos_hold_step_end ON deployments`,
		fmt.Sprintf(`SELECT pg_advisory_unlock(%d)`, stepEndHoldKey),
	} {
		if _, err := h.conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// checkServicesRun checks what the environment holds on the Swarm: exactly
// the wanted services, each of the deployment's spec with its replicas
// running, and one job service that ran one task. Replicas may be
// restarting (a health check that timed out on a starved machine): it
// waits up to three minutes for the state, and reports the last look.
func checkServicesRun(t *testing.T, envID, deploymentID string, want map[string]uint64) {
	t.Helper()
	var problems []string
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(time.Second) {
		if problems = servicesRunProblems(t, envID, deploymentID, want); len(problems) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// servicesRunProblems is what checkServicesRun finds wrong, now.
func servicesRunProblems(t *testing.T, envID, deploymentID string, want map[string]uint64) []string {
	t.Helper()
	var problems []string
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
				problems = append(problems, fmt.Sprintf("job service %s has %d tasks, want 1 (one run)", s.Spec.Name, len(tasks)))
			}
			continue
		}
		name := labels[swarm.LabelService]
		if seen[name] {
			problems = append(problems, fmt.Sprintf("service %s is on the Swarm twice", name))
		}
		seen[name] = true
		replicas, ok := want[name]
		if !ok {
			problems = append(problems, fmt.Sprintf("unexpected service %s (%s)", name, s.Spec.Name))
			continue
		}
		if got := labels[swarm.LabelDeployment]; got != deploymentID {
			problems = append(problems, fmt.Sprintf("service %s runs the spec of deployment %s, want %s", name, got, deploymentID))
		}
		running := uint64(0)
		for _, task := range tasks {
			if task.DesiredState == dockerswarm.TaskStateRunning && task.Status.State == dockerswarm.TaskStateRunning {
				running++
			}
		}
		if running != replicas {
			problems = append(problems, fmt.Sprintf("service %s has %d running tasks, want %d", name, running, replicas))
		}
	}
	for name := range want {
		if !seen[name] {
			problems = append(problems, fmt.Sprintf("service %s is not on the Swarm", name))
		}
	}
	if jobServices != 1 {
		problems = append(problems, fmt.Sprintf("%d job services on the Swarm, want 1", jobServices))
	}
	return problems
}
