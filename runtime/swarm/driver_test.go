package swarm_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"github.com/slipwayhq/slipway/manifest"
	rswarm "github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
)

// These tests run against the real Swarm of the machine. Every test gets
// its own environment (random short id and env id), removed on cleanup.

type testBundle struct {
	cli    *client.Client
	driver *rswarm.Driver
	env    rswarm.EnvRef
	web    string
	job    string
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	cli := swarmtest.Client(t)
	id := swarmtest.ID()
	b := &testBundle{
		cli:    cli,
		driver: rswarm.NewDriver(cli, nil),
		env:    rswarm.EnvRef{ID: "test-env-" + id, ShortID: "t" + id},
		web:    swarmtest.Image(t, "web"),
		job:    swarmtest.Image(t, "job"),
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if _, err := b.driver.RemoveEnvironment(ctx, b.env); err != nil {
			t.Logf("cleanup: %v", err)
		}
		if _, err := b.driver.RemoveVolumes(ctx, b.env); err != nil {
			t.Logf("cleanup volumes: %v", err)
		}
	})
	return b
}

func (b *testBundle) desired(t *testing.T, m *manifest.Manifest, images map[string]string) rswarm.DesiredState {
	t.Helper()
	st, err := rswarm.Desired(rswarm.DesiredInput{
		Manifest:     m,
		TeamID:       "team-test",
		AppID:        "app-test",
		EnvID:        b.env.ID,
		EnvShortID:   b.env.ShortID,
		DeploymentID: "dep-" + swarmtest.ID(),
		Images:       images,
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// deploy applies desired the way the pipeline does: objects first, then
// services in dependency order, each awaited.
func (b *testBundle) deploy(ctx context.Context, st rswarm.DesiredState, timeout time.Duration) error {
	for _, ensure := range []func(context.Context, rswarm.DesiredState) error{
		b.driver.EnsureNetworks, b.driver.EnsureVolumes, b.driver.EnsureConfigs, b.driver.EnsureSecrets,
	} {
		if err := ensure(ctx, st); err != nil {
			return err
		}
	}
	for _, name := range rolloutOrder(st) {
		svc, _ := st.Service(name)
		if _, err := b.driver.UpdateService(ctx, svc); err != nil {
			return err
		}
		if err := b.driver.WaitConverged(ctx, svc, timeout); err != nil {
			return err
		}
	}
	return nil
}

// rolloutOrder is a depth-first depends_on order (the manifest is valid).
func rolloutOrder(st rswarm.DesiredState) []string {
	var out []string
	seen := map[string]bool{}
	var visit func(string)
	visit = func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		svc, _ := st.Service(name)
		for _, dep := range svc.DependsOn {
			visit(dep)
		}
		out = append(out, name)
	}
	for _, s := range st.Services {
		visit(s.Service)
	}
	return out
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// httpCheck is the HTTP health check of a service meant to get healthy,
// generous for a busy machine: Docker's timeout includes starting the probe
// in the container, which takes more than a second when the machine is
// busy, and failures during the start period do not count, so a task that
// is slow to start is not killed. A healthy task passes its first check
// after about 2 s, whatever the start period.
func httpCheck(port int64) *manifest.Healthcheck {
	return &manifest.Healthcheck{
		Type: manifest.HealthcheckHTTP, Port: manifest.NewInt(port),
		IntervalSeconds: manifest.NewInt(2), TimeoutSeconds: manifest.NewInt(2),
		StartPeriodSeconds: manifest.NewInt(30), Retries: manifest.NewInt(5),
	}
}

// failingCheck is the check of a service meant never to get healthy: no
// start period, so a task fails after three checks instead of after the
// start period.
func failingCheck(port int64) *manifest.Healthcheck {
	h := httpCheck(port)
	h.StartPeriodSeconds, h.Retries = nil, manifest.NewInt(3)
	return h
}

func app(services ...manifest.Service) *manifest.Manifest {
	return &manifest.Manifest{APIVersion: manifest.APIVersion, Kind: manifest.Kind, Metadata: manifest.Metadata{Name: "demo"}, Spec: manifest.Spec{Services: services}}
}

func fastRollout(order string) *manifest.Rollout {
	return &manifest.Rollout{Order: order, MonitorSeconds: manifest.NewInt(2)}
}

func TestDriver_TwoServicesConverge(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := ctxFor(t, 3*time.Minute)
	m := app(
		manifest.Service{Name: "web", Replicas: manifest.NewInt(2), Environment: map[string]string{"VERSION": "v1"},
			Healthcheck: httpCheck(8080), DependsOn: []string{"worker"}, Rollout: fastRollout("")},
		manifest.Service{Name: "worker", Environment: map[string]string{"PORT": "9090"}},
	)
	st := b.desired(t, m, map[string]string{"web": b.web, "worker": b.web})
	if err := b.deploy(ctx, st, 90*time.Second); err != nil {
		t.Fatal(err)
	}
	counter := rswarm.CountCalls(b.cli)
	obs, err := rswarm.NewDriver(counter, nil).Observe(ctx, b.env)
	if err != nil {
		t.Fatal(err)
	}
	if n := counter.Calls(); n != 7 {
		t.Fatalf("Observe made %d Engine calls, want 7", n)
	}
	if len(obs.Services) != 2 || len(obs.Networks) != 1 || len(obs.Configs) != 1 {
		t.Fatalf("observed %d services, %d networks, %d configs", len(obs.Services), len(obs.Networks), len(obs.Configs))
	}
	web, _ := obs.Service(rswarm.ServiceName(b.env.ShortID, "web"))
	running := 0
	for _, task := range obs.TasksOf(web.ID) {
		if task.Status.State == swarm.TaskStateRunning {
			running++
		}
	}
	if running != 2 {
		t.Fatalf("web has %d running tasks, want 2", running)
	}
	states := rswarm.States(obs)
	if len(states) != 2 {
		t.Fatalf("states %+v", states)
	}
	for _, s := range states {
		if !s.Converged || s.Running != s.Desired || s.Image != b.web {
			t.Fatalf("state %+v", s)
		}
	}
	// What Swarm stores must read back as exactly what we asked for, or
	// every reconcile would see drift.
	actions, err := rswarm.Plan(obs, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(actions) != 0 {
		t.Fatalf("a converged environment plans %v", actions)
	}
	// Deploying again is a no-op: nothing is updated.
	before := web.Version.Index
	if err := b.deploy(ctx, st, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	again, _, err := b.cli.ServiceInspectWithRaw(ctx, web.ID, swarm.ServiceInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Version.Index != before {
		t.Fatalf("an unchanged redeploy updated the service (version %d -> %d)", before, again.Version.Index)
	}
}

func TestDriver_HealthCheckGatesReadiness(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := ctxFor(t, 5*time.Minute)

	t.Run("a service that never gets healthy fails with the reason", func(t *testing.T) {
		m := app(manifest.Service{Name: "sick", Environment: map[string]string{"HEALTHY": "false", "DRAIN_SECONDS": "0"}, Healthcheck: failingCheck(8080)})
		st := b.desired(t, m, map[string]string{"sick": b.web})
		start := time.Now()
		// Three failed starts take about a minute; the timeout is only a
		// bound for a busy machine.
		err := b.deploy(ctx, st, 3*time.Minute)
		var e *rswarm.Error
		if !errors.As(err, &e) || e.Code != rswarm.CodeRolloutFailed {
			t.Fatalf("got %v, want rollout_failed", err)
		}
		if !strings.Contains(e.Message, "health check") {
			t.Fatalf("reason %q does not blame the health check", e.Message)
		}
		t.Logf("failed after %s: %v", time.Since(start).Round(time.Second), err)
	})

	t.Run("a wrong port never gets healthy", func(t *testing.T) {
		m := app(manifest.Service{Name: "wrongport", Healthcheck: httpCheck(9999)})
		st := b.desired(t, m, map[string]string{"wrongport": b.web})
		svc, _ := st.Service("wrongport")
		if err := b.driver.EnsureNetworks(ctx, st); err != nil {
			t.Fatal(err)
		}
		if err := b.driver.EnsureConfigs(ctx, st); err != nil {
			t.Fatal(err)
		}
		if _, err := b.driver.UpdateService(ctx, svc); err != nil {
			t.Fatal(err)
		}
		// The process runs at once, but the probe, which decides
		// readiness, never passes: a broken probe would pass its first
		// check after about 2 s.
		if err := b.driver.WaitConverged(ctx, svc, 10*time.Second); rswarm.Code(err) != rswarm.CodeConvergenceTimeout {
			t.Fatalf("got %v, want convergence_timeout for a probe hitting a closed port", err)
		}
	})
}

func TestDriver_FailedUpdateIsPausedAndOldKeepsServing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := ctxFor(t, 3*time.Minute)
	svc := manifest.Service{Name: "web", Environment: map[string]string{"VERSION": "v1"}, Healthcheck: httpCheck(8080), Rollout: fastRollout("")}
	st := b.desired(t, app(svc), map[string]string{"web": b.web})
	if err := b.deploy(ctx, st, 90*time.Second); err != nil {
		t.Fatal(err)
	}
	obs, _ := b.driver.Observe(ctx, b.env)
	web, _ := obs.Service(rswarm.ServiceName(b.env.ShortID, "web"))
	var oldTask string
	for _, task := range obs.TasksOf(web.ID) {
		if task.Status.State == swarm.TaskStateRunning {
			oldTask = task.ID
		}
	}

	svc.Environment = map[string]string{"VERSION": "v2", "HEALTHY": "false"}
	svc.Healthcheck = failingCheck(8080)
	bad := b.desired(t, app(svc), map[string]string{"web": b.web})
	err := b.deploy(ctx, bad, 90*time.Second)
	var e *rswarm.Error
	if !errors.As(err, &e) || e.Code != rswarm.CodeRolloutFailed {
		t.Fatalf("got %v, want rollout_failed", err)
	}
	if !strings.Contains(e.Message, "paused") {
		t.Fatalf("reason %q does not report Swarm's paused rollout", e.Message)
	}
	task, _, err := b.cli.TaskInspectWithRaw(ctx, oldTask)
	if err != nil {
		t.Fatal(err)
	}
	// When Swarm pauses the rollout the previous task still runs, and
	// keeps running: the restart policy retries the failed replacement
	// only RestartMaxAttempts times (TestDriver_PausedRolloutStopsRetrying,
	// docs/deployments.md).
	if task.Status.State != swarm.TaskStateRunning {
		t.Fatalf("the previous task is %s (desired %s) when the rollout is paused; it should still be serving", task.Status.State, task.DesiredState)
	}
}

func TestDriver_StartFirstRolloutDropsNoRequest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := ctxFor(t, 4*time.Minute)
	hammer := swarmtest.Image(t, "hammer")
	web := manifest.Service{Name: "web", Replicas: manifest.NewInt(2), Environment: map[string]string{"VERSION": "v1"},
		Healthcheck: httpCheck(8080), Rollout: fastRollout(manifest.RolloutStartFirst)}
	client := manifest.Service{Name: "client", Replicas: manifest.NewInt(0)}
	m := app(web, client)
	m.Spec.Jobs = []manifest.Job{{Name: "hammer", Service: "client", TimeoutSeconds: manifest.NewInt(120),
		Command: []string{"/app", "--url", "http://web:8080/version", "--duration", "40s"}}}
	images := map[string]string{"web": b.web, "client": hammer}
	st := b.desired(t, m, images)
	if err := b.deploy(ctx, st, 90*time.Second); err != nil {
		t.Fatal(err)
	}
	job, _ := st.Job("hammer")

	var wg sync.WaitGroup
	var res rswarm.JobResult
	var jobErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		res, jobErr = b.driver.RunJob(ctx, job)
	}()
	waitJobRunning(t, ctx, b.cli, job.Spec.Name)

	web.Environment = map[string]string{"VERSION": "v2"}
	next := b.desired(t, app(web, client), images)
	svc, _ := next.Service("web")
	if _, err := b.driver.UpdateService(ctx, svc); err != nil {
		t.Fatal(err)
	}
	if err := b.driver.WaitConverged(ctx, svc, 90*time.Second); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	out := string(res.Output)
	if jobErr != nil {
		t.Fatalf("hammer: %v\n%s", jobErr, out)
	}
	if !strings.Contains(out, "failed=0") {
		t.Fatalf("hammer output:\n%s", out)
	}
	t.Log(strings.TrimSpace(out[strings.LastIndex(out, "ok="):]))
}

func waitJobRunning(t *testing.T, ctx context.Context, cli *client.Client, name string) {
	t.Helper()
	for {
		tasks, err := cli.TaskList(ctx, swarm.TaskListOptions{Filters: filters.NewArgs(filters.Arg("service", name))})
		if err == nil {
			for _, task := range tasks {
				if task.Status.State == swarm.TaskStateRunning {
					time.Sleep(2 * time.Second) // a baseline before the rollout
					return
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("job %s never started", name)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func TestDriver_StopFirstWithWritableVolumeNeverOverlaps(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := ctxFor(t, 3*time.Minute)
	svc := manifest.Service{Name: "db", Environment: map[string]string{"VERSION": "v1"}, Healthcheck: httpCheck(8080),
		Mounts: []manifest.Mount{{Volume: "data", Target: "/data"}}, Rollout: &manifest.Rollout{MonitorSeconds: manifest.NewInt(1)}}
	m := app(svc)
	m.Spec.Volumes = []manifest.Volume{{Name: "data"}}
	st := b.desired(t, m, map[string]string{"db": b.web})
	if got := st.Services[0].Spec.UpdateConfig.Order; got != swarm.UpdateOrderStopFirst {
		t.Fatalf("derived order %s, want stop-first", got)
	}
	if err := b.deploy(ctx, st, 90*time.Second); err != nil {
		t.Fatal(err)
	}

	m.Spec.Services[0].Environment = map[string]string{"VERSION": "v2"}
	next := b.desired(t, m, map[string]string{"db": b.web})
	want, _ := next.Service("db")
	if _, err := b.driver.UpdateService(ctx, want); err != nil {
		t.Fatal(err)
	}
	// Sample the tasks throughout the rollout: never two live containers.
	done := make(chan error, 1)
	go func() { done <- b.driver.WaitConverged(ctx, want, 90*time.Second) }()
	samples, maxLive := 0, 0
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			if samples < 5 {
				t.Fatalf("only %d samples", samples)
			}
			if maxLive != 1 {
				t.Fatalf("at most %d live tasks during the rollout, want exactly 1", maxLive)
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
		tasks, err := b.cli.TaskList(ctx, swarm.TaskListOptions{Filters: filters.NewArgs(filters.Arg("service", want.Spec.Name))})
		if err != nil {
			t.Fatal(err)
		}
		live := 0
		for _, task := range tasks {
			switch task.Status.State {
			case swarm.TaskStateStarting, swarm.TaskStateRunning:
				live++
			}
		}
		samples++
		maxLive = max(maxLive, live)
	}
}

func TestDriver_Jobs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := ctxFor(t, 3*time.Minute)
	m := app(manifest.Service{Name: "tool", Replicas: manifest.NewInt(0)})
	m.Spec.Jobs = []manifest.Job{
		{Name: "ok", Service: "tool", Command: []string{"/app", "--print", "migrated 3 tables"}},
		{Name: "fails", Service: "tool", Command: []string{"/app", "--print", "boom", "--exit", "3"}},
		{Name: "slow", Service: "tool", Command: []string{"/app", "--sleep", "60"}, TimeoutSeconds: manifest.NewInt(3)},
		{Name: "chatty", Service: "tool", Command: []string{"/app", "--print-bytes", "1500000"}},
		{Name: "resumed", Service: "tool", Command: []string{"/app", "--sleep", "3", "--print", "once"}},
	}
	st := b.desired(t, m, map[string]string{"tool": b.job})
	if err := b.deploy(ctx, st, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	// The runs go concurrently (each waits on Swarm); the subtests then
	// check their outcomes.
	type outcome struct {
		res rswarm.JobResult
		err error
	}
	outcomes := map[string]*outcome{}
	var wg sync.WaitGroup
	for _, name := range []string{"ok", "fails", "slow", "chatty", "resumed", "resumed"} {
		job, _ := st.Job(name)
		o := &outcome{}
		if outcomes[name] != nil {
			// The second "resumed" starts once the first created its run.
			time.Sleep(time.Second)
			name += "-again"
		}
		outcomes[name] = o
		wg.Add(1)
		go func() {
			defer wg.Done()
			o.res, o.err = b.driver.RunJob(ctx, job)
		}()
	}
	wg.Wait()
	for name, o := range outcomes {
		t.Logf("%s: ran %s", name, o.res.EndedAt.Sub(o.res.StartedAt).Round(100*time.Millisecond))
	}

	t.Run("success keeps the output", func(t *testing.T) {
		o := outcomes["ok"]
		if o.err != nil || strings.TrimSpace(string(o.res.Output)) != "migrated 3 tables" || o.res.Truncated {
			t.Fatalf("%v %q", o.err, o.res.Output)
		}
	})
	t.Run("non-zero exit is job_failed", func(t *testing.T) {
		o := outcomes["fails"]
		var e *rswarm.Error
		if !errors.As(o.err, &e) || e.Code != rswarm.CodeJobFailed || !strings.Contains(e.Message, "exit code 3") {
			t.Fatalf("got %v, want job_failed naming exit code 3", o.err)
		}
		if o.res.ExitCode != 3 || !strings.Contains(string(o.res.Output), "boom") {
			t.Fatalf("result %+v", o.res)
		}
	})
	t.Run("timeout is job_timeout and stops the run", func(t *testing.T) {
		if err := outcomes["slow"].err; rswarm.Code(err) != rswarm.CodeJobTimeout {
			t.Fatalf("got %v, want job_timeout", err)
		}
		job, _ := st.Job("slow")
		if _, _, err := b.cli.ServiceInspectWithRaw(ctx, job.Spec.Name, swarm.ServiceInspectOptions{}); err == nil {
			t.Fatal("the timed-out run still exists")
		}
	})
	t.Run("output beyond 1 MiB is truncated", func(t *testing.T) {
		o := outcomes["chatty"]
		if o.err != nil || !o.res.Truncated || len(o.res.Output) != rswarm.MaxJobOutput {
			t.Fatalf("%v truncated=%v len=%d", o.err, o.res.Truncated, len(o.res.Output))
		}
	})
	t.Run("a run already going is awaited, not started again", func(t *testing.T) {
		if err := errors.Join(outcomes["resumed"].err, outcomes["resumed-again"].err); err != nil {
			t.Fatal(err)
		}
		if a, b := outcomes["resumed"].res.Output, outcomes["resumed-again"].res.Output; strings.TrimSpace(string(a)) != "once" || string(a) != string(b) {
			t.Fatalf("outputs %q and %q", a, b)
		}
		job, _ := st.Job("resumed")
		tasks, err := b.cli.TaskList(ctx, swarm.TaskListOptions{Filters: filters.NewArgs(filters.Arg("service", job.Spec.Name))})
		if err != nil || len(tasks) != 1 {
			t.Fatalf("%v: the job ran %d times", err, len(tasks))
		}
	})
}

func TestDriver_DriftAfterManualScale(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := ctxFor(t, 3*time.Minute)
	st := b.desired(t, app(manifest.Service{Name: "web"}), map[string]string{"web": b.web})
	if err := b.deploy(ctx, st, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	name := rswarm.ServiceName(b.env.ShortID, "web")
	svc, _, err := b.cli.ServiceInspectWithRaw(ctx, name, swarm.ServiceInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	three := uint64(3)
	spec := svc.Spec
	spec.Mode.Replicated = &swarm.ReplicatedService{Replicas: &three}
	if _, err := b.cli.ServiceUpdate(ctx, svc.ID, svc.Version, spec, swarm.ServiceUpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	obs, err := b.driver.Observe(ctx, b.env)
	if err != nil {
		t.Fatal(err)
	}
	actions, err := rswarm.Plan(obs, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(actions) != 1 || actions[0].Op != rswarm.OpUpdate || len(actions[0].Drift) != 1 ||
		actions[0].Drift[0].Field != "replicas" || actions[0].Drift[0].Observed != "3" || actions[0].Drift[0].Desired != "1" {
		t.Fatalf("plan %v", actions)
	}
	// Repair: applying the desired spec brings it back to one replica.
	if err := b.deploy(ctx, st, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	obs, _ = b.driver.Observe(ctx, b.env)
	if actions, _ := rswarm.Plan(obs, st); len(actions) != 0 {
		t.Fatalf("after repair: %v", actions)
	}
}

func TestDriver_ForeignObjectsAreRefusedAndUntouched(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := ctxFor(t, 2*time.Minute)
	label := map[string]string{swarmtest.LabelKey: swarmtest.Label(t)}
	st := b.desired(t, app(manifest.Service{Name: "web"}), map[string]string{"web": b.web})

	// An unlabelled service squatting on the web service's name.
	replicas := uint64(0)
	foreign, err := b.cli.ServiceCreate(ctx, swarm.ServiceSpec{
		Annotations:  swarm.Annotations{Name: rswarm.ServiceName(b.env.ShortID, "web"), Labels: label},
		TaskTemplate: swarm.TaskSpec{ContainerSpec: &swarm.ContainerSpec{Image: b.web}},
		Mode:         swarm.ServiceMode{Replicated: &swarm.ReplicatedService{Replicas: &replicas}},
	}, swarm.ServiceCreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// And an unlabelled network with the environment network's name.
	net, err := b.cli.NetworkCreate(ctx, rswarm.NetworkName(b.env.ShortID), network.CreateOptions{Driver: "overlay", Attachable: true, Labels: label})
	if err != nil {
		t.Fatal(err)
	}

	obs, err := b.driver.Observe(ctx, b.env)
	if err != nil {
		t.Fatal(err)
	}
	if len(obs.Services) != 0 || len(obs.Foreign) != 2 {
		t.Fatalf("observed %d services as ours, %d foreign", len(obs.Services), len(obs.Foreign))
	}
	_, err = rswarm.Plan(obs, st)
	if rswarm.Code(err) != rswarm.CodeNameConflict || !strings.Contains(err.Error(), "service "+rswarm.ServiceName(b.env.ShortID, "web")) {
		t.Fatalf("plan: got %v, want name_conflict naming the service", err)
	}
	if err := b.driver.EnsureNetworks(ctx, st); rswarm.Code(err) != rswarm.CodeNameConflict {
		t.Fatalf("EnsureNetworks: got %v, want name_conflict", err)
	}
	svc, _ := st.Service("web")
	if _, err := b.driver.UpdateService(ctx, svc); rswarm.Code(err) != rswarm.CodeNameConflict {
		t.Fatalf("UpdateService: got %v, want name_conflict", err)
	}
	if _, err := b.driver.RemoveEnvironment(ctx, b.env); err != nil {
		t.Fatal(err)
	}
	after, _, err := b.cli.ServiceInspectWithRaw(ctx, foreign.ID, swarm.ServiceInspectOptions{})
	if err != nil || after.Version.Index == 0 || after.Spec.Labels[rswarm.LabelManaged] != "" {
		t.Fatalf("the foreign service was changed or removed: %v", err)
	}
	if _, err := b.cli.NetworkInspect(ctx, net.ID, network.InspectOptions{}); err != nil {
		t.Fatalf("the foreign network was removed: %v", err)
	}
}

func TestDriver_RemoveEnvironmentKeepsVolumes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := ctxFor(t, 3*time.Minute)
	m := app(manifest.Service{Name: "db", Healthcheck: httpCheck(8080), Mounts: []manifest.Mount{{Volume: "data", Target: "/data"}}})
	m.Spec.Volumes = []manifest.Volume{{Name: "data"}}
	st := b.desired(t, m, map[string]string{"db": b.web})
	if err := b.deploy(ctx, st, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	removed, err := b.driver.RemoveEnvironment(ctx, b.env)
	if err != nil {
		t.Fatal(err)
	}
	volName := rswarm.VolumeName(b.env.ShortID, "data")
	if len(removed.Services) != 1 || len(removed.Networks) != 1 || len(removed.Configs) != 1 ||
		len(removed.RetainedVolumes) != 1 || removed.RetainedVolumes[0] != volName {
		t.Fatalf("removed %+v", removed)
	}
	obs, err := b.driver.Observe(ctx, b.env)
	if err != nil {
		t.Fatal(err)
	}
	if len(obs.Services)+len(obs.Networks)+len(obs.Configs)+len(obs.Secrets) != 0 || len(obs.Volumes) != 1 {
		t.Fatalf("left behind: %d services %d networks %d configs, %d volumes", len(obs.Services), len(obs.Networks), len(obs.Configs), len(obs.Volumes))
	}
	// Previews remove their volumes explicitly.
	gone, err := b.driver.RemoveVolumes(ctx, b.env)
	if err != nil || len(gone) != 1 {
		t.Fatalf("%v %v", gone, err)
	}
	list, err := b.cli.VolumeList(ctx, volume.ListOptions{Filters: filters.NewArgs(filters.Arg("name", volName))})
	if err != nil || len(list.Volumes) != 0 {
		t.Fatalf("volume still there: %v", err)
	}
}

func TestDriver_DockerUnavailable(t *testing.T) {
	t.Parallel()
	cli, err := client.NewClientWithOpts(client.WithHost("unix:///nonexistent/docker.sock"), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	_, err = rswarm.NewDriver(cli, nil).Observe(context.Background(), rswarm.EnvRef{ID: "x", ShortID: "x"})
	if !rswarm.IsDockerUnavailable(err) {
		t.Fatalf("got %v, want docker_unavailable", err)
	}
}

func TestServiceEvents(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := ctxFor(t, time.Minute)
	events, errs := rswarm.ServiceEvents(ctx, b.cli)
	st := b.desired(t, app(manifest.Service{Name: "idle", Replicas: manifest.NewInt(0)}), map[string]string{"idle": b.web})
	if err := b.deploy(ctx, st, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	want := rswarm.ServiceName(b.env.ShortID, "idle")
	for {
		select {
		case ev := <-events:
			if ev.Name == want && ev.Action == "create" {
				return
			}
		case err := <-errs:
			t.Fatal(err)
		case <-ctx.Done():
			t.Fatal("no create event for " + want)
		}
	}
}

func TestDriver_FilesSecretsAndJobEnvironment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := ctxFor(t, 2*time.Minute)
	m := app(manifest.Service{
		Name:        "tool",
		Replicas:    manifest.NewInt(3),
		Environment: map[string]string{"SHARED": "service"},
		Command:     []string{"/app", "--sleep", "3600"},
		Files: []manifest.File{
			{Target: "/etc/tool/inline.conf", Content: "inline=1", Mode: "0440"},
			{Target: "/etc/tool/repo.conf", Path: "conf/repo.conf"},
		},
		Secrets: []manifest.SecretMount{{Name: "api-key", Target: "/run/secrets/api-key"}},
	})
	m.Spec.Jobs = []manifest.Job{{
		Name: "inspect", Service: "tool", StopService: true,
		Command:     []string{"/app", "--cat", "/etc/tool/inline.conf,/etc/tool/repo.conf,/run/secrets/api-key,/run/secrets/owner", "--env", "SHARED,JOB_ONLY"},
		Environment: map[string]string{"JOB_ONLY": "job"},
		Secrets:     []manifest.SecretMount{{Name: "owner", Target: "/run/secrets/owner"}},
	}}
	st, err := rswarm.Desired(rswarm.DesiredInput{
		Manifest: m, TeamID: "team-test", AppID: "app-test", EnvID: b.env.ID, EnvShortID: b.env.ShortID, DeploymentID: "dep-1",
		Images:          map[string]string{"tool": b.job},
		Secrets:         map[string]rswarm.SecretValue{"api-key": {Value: []byte("k-123"), Version: "1"}, "owner": {Value: []byte("o-456"), Version: "2"}},
		RepositoryFiles: map[string][]byte{"conf/repo.conf": []byte("from=repo")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.deploy(ctx, st, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	job, _ := st.Job("inspect")
	if len(job.StopServices) != 1 || job.StopServices[0] != "tool" {
		t.Fatalf("stop services %v", job.StopServices)
	}
	if err := b.driver.StopService(ctx, b.env, "tool"); err != nil {
		t.Fatal(err)
	}
	obs, _ := b.driver.Observe(ctx, b.env)
	tool, _ := obs.Service(rswarm.ServiceName(b.env.ShortID, "tool"))
	for _, task := range obs.TasksOf(tool.ID) {
		if task.Status.State == swarm.TaskStateRunning {
			t.Fatal("the stopped service still has a running task")
		}
	}
	res, err := b.driver.RunJob(ctx, job)
	if err != nil {
		t.Fatalf("%v\n%s", err, res.Output)
	}
	want := "/etc/tool/inline.conf 0440 inline=1\n" +
		"/etc/tool/repo.conf 0444 from=repo\n" +
		"/run/secrets/api-key 0444 k-123\n" +
		"/run/secrets/owner 0444 o-456\n" +
		"SHARED=service\nJOB_ONLY=job\n"
	if string(res.Output) != want {
		t.Fatalf("job saw:\n%s\nwant:\n%s", res.Output, want)
	}
	// The job's own environment and secret stay out of the service.
	svc, _ := st.Service("tool")
	for _, e := range svc.Spec.TaskTemplate.ContainerSpec.Env {
		if strings.HasPrefix(e, "JOB_ONLY=") {
			t.Fatal("job environment in the service")
		}
	}
	if n := len(svc.Spec.TaskTemplate.ContainerSpec.Secrets); n != 1 {
		t.Fatalf("service mounts %d secrets, want 1", n)
	}
	// The rollout starts the stopped service again; the tasks the stop
	// ended are not mistaken for failed starts.
	if changed, err := b.driver.UpdateService(ctx, svc); err != nil || !changed {
		t.Fatalf("restart: changed=%v %v", changed, err)
	}
	if err := b.driver.WaitConverged(ctx, svc, 60*time.Second); err != nil {
		t.Fatal(err)
	}
}
