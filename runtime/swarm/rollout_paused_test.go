package swarm_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/swarm"

	"github.com/slipwayhq/slipway/manifest"
	rswarm "github.com/slipwayhq/slipway/runtime/swarm"
)

// TestDriver_PausedRolloutStopsRetrying: after a failed start-first
// rollout Swarm pauses the update; the restart policy then retries the
// failing new task a bounded number of times (rswarm.RestartMaxAttempts
// per spec version) instead of forever, and the previous task keeps
// serving throughout: with rollback = "manual" nothing else will ever
// touch the service, so this is the state the environment stays in.
func TestDriver_PausedRolloutStopsRetrying(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := ctxFor(t, 5*time.Minute)
	svc := manifest.Service{Name: "web", Environment: map[string]string{"VERSION": "v1"}, Healthcheck: httpCheck(8080), Rollout: fastRollout(manifest.RolloutStartFirst)}
	if err := b.deploy(ctx, b.desired(t, app(svc), map[string]string{"web": b.web}), 90*time.Second); err != nil {
		t.Fatal(err)
	}
	name := rswarm.ServiceName(b.env.ShortID, "web")
	tasks := func() []swarm.Task {
		t.Helper()
		list, err := b.cli.TaskList(ctx, swarm.TaskListOptions{Filters: filters.NewArgs(filters.Arg("service", name))})
		if err != nil {
			t.Fatal(err)
		}
		return list
	}
	var oldTask string
	for _, task := range tasks() {
		if task.Status.State == swarm.TaskStateRunning {
			oldTask = task.ID
		}
	}
	if oldTask == "" {
		t.Fatal("no running task after the first deployment")
	}

	// The new version cannot even start, so each try fails within a
	// second and the restart delay (5 s) paces the retries.
	svc.Environment = map[string]string{"VERSION": "v2"}
	svc.Command = []string{"/nonexistent"}
	err := b.deploy(ctx, b.desired(t, app(svc), map[string]string{"web": b.web}), 90*time.Second)
	var e *rswarm.Error
	if !errors.As(err, &e) || e.Code != rswarm.CodeRolloutFailed {
		t.Fatalf("got %v, want rollout_failed", err)
	}

	// Long enough for an unbounded policy to retry the new task about
	// twice as often as the bound allows.
	// Swarm keeps only a few ended tasks per slot, so the new version's
	// tasks are collected as they appear rather than counted at the end.
	seen := map[string]bool{}
	for deadline := time.Now().Add(75 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		for _, task := range tasks() {
			if task.ID == oldTask {
				if task.Status.State != swarm.TaskStateRunning || task.DesiredState != swarm.TaskStateRunning {
					t.Fatalf("the previous task is %s (desired %s) while the rollout is paused; it must keep serving", task.Status.State, task.DesiredState)
				}
				continue
			}
			if slices.Contains(task.Spec.ContainerSpec.Env, "VERSION=v2") {
				seen[task.ID] = true
			}
		}
	}
	newTasks := len(seen)
	// The updater's own try plus the bounded restarts of it.
	if max := 1 + int(rswarm.RestartMaxAttempts); newTasks > max {
		t.Fatalf("%d tasks of the failed version were started; the restart policy should stop at %d", newTasks, max)
	}
	t.Logf("tasks of the failed version: %d", newTasks)
}
