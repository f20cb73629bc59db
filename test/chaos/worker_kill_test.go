package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
	"github.com/slipwayhq/slipway/test/summary"
)

// slipwayBinary returns the binary under test: SLIPWAY_BIN (make test sets
// it), or one built for this test.
func slipwayBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("SLIPWAY_BIN"); bin != "" {
		return bin
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	bin := filepath.Join(t.TempDir(), "slipway")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/slipway")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build slipway: %v\n%s", err, out)
	}
	return bin
}

// testSecretKey is the workers' key-encryption key in these tests.
var testSecretKey = strings.Repeat("5a", 32)

// startWorker runs `slipway worker` against the database.
func startWorker(t *testing.T, bin, databaseURL, logName string) *exec.Cmd {
	t.Helper()
	logFile, err := os.Create(filepath.Join(t.TempDir(), logName))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "worker")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+databaseURL, "SLIPWAY_IMAGES_PULL=false", "SLIPWAY_SECRET_KEY="+testSecretKey)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		if t.Failed() {
			out, _ := os.ReadFile(logFile.Name())
			t.Logf("%s:\n%s", logName, out)
		}
	})
	return cmd
}

// TestWorkerKilledMidRolloutResumes kills the worker with SIGKILL while a
// deployment rolls out, starts another worker, and checks that the
// deployment completes and that its job ran exactly once.
func TestWorkerKilledMidRolloutResumes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bin := slipwayBinary(t)
	url := storetest.NewDatabaseURL(t)
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st := store.New(pool)
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
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cli := swarmtest.Client(t)
		d := swarm.NewDriver(cli, nil)
		ref := swarm.EnvRef{ID: env.ID, ShortID: store.ShortID(env.ID)}
		_, _ = d.RemoveEnvironment(ctx, ref)
		_, _ = d.RemoveVolumes(ctx, ref)
	})

	first := startWorker(t, bin, url, "worker-1.log")
	waitFor(t, 3*time.Minute, "the deployment to roll out web", func() bool {
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
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = first.Process.Wait()

	startWorker(t, bin, url, "worker-2.log")
	var final store.Deployment
	waitFor(t, 4*time.Minute, "the deployment to finish after the restart", func() bool {
		final, err = st.GetDeployment(ctx, team.ID, dep.ID)
		if err != nil {
			t.Fatal(err)
		}
		return final.State.Terminal()
	})
	if final.State != store.StateSucceeded {
		t.Fatalf("deployment %s: %s %s\nsteps %s", final.State, final.ErrorCode, final.ErrorMessage, final.Steps)
	}
	events, err := st.ListEvents(ctx, team.ID, store.EventFilter{ObjectType: "deployment", ObjectID: dep.ID, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	for _, e := range events {
		if e.Verb == "job.succeeded" {
			runs++
		}
	}
	if runs != 1 {
		t.Fatalf("the migrate job succeeded %d times, want exactly once", runs)
	}
	summary.Line(t, "faults: 1 scenario survived (worker killed with SIGKILL mid-rollout: deployment %s resumed and succeeded, its job ran once)", dep.ID)
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
