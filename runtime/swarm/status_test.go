package swarm

import (
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/swarm"
)

// Logic tests of how Swarm's reported state is read; the real-engine
// tests (driver_test.go) produce the paused and crash-loop cases for real.
func TestServiceStatus(t *testing.T) {
	two := uint64(2)
	spec := swarm.ServiceSpec{
		Annotations:  swarm.Annotations{Name: "slw-x-web"},
		TaskTemplate: swarm.TaskSpec{ContainerSpec: &swarm.ContainerSpec{Image: "web:2"}},
		Mode:         swarm.ServiceMode{Replicated: &swarm.ReplicatedService{Replicas: &two}},
	}
	oldSpec := swarm.TaskSpec{ContainerSpec: &swarm.ContainerSpec{Image: "web:1"}}
	task := func(ts swarm.TaskSpec, state swarm.TaskState, desired swarm.TaskState, errMsg string) swarm.Task {
		return swarm.Task{Spec: ts, DesiredState: desired, Status: swarm.TaskStatus{State: state, Err: errMsg, Timestamp: time.Now(),
			ContainerStatus: &swarm.ContainerStatus{PID: 42}}}
	}
	running := func(ts swarm.TaskSpec) swarm.Task {
		return task(ts, swarm.TaskStateRunning, swarm.TaskStateRunning, "")
	}
	tests := []struct {
		name      string
		update    *swarm.UpdateStatus
		tasks     []swarm.Task
		converged bool
		failed    bool
		reason    string
	}{
		{name: "all current replicas running", tasks: []swarm.Task{running(spec.TaskTemplate), running(spec.TaskTemplate)}, converged: true},
		{name: "a running task without a process is not running", tasks: []swarm.Task{running(spec.TaskTemplate), func() swarm.Task {
			t := running(spec.TaskTemplate)
			t.Status.ContainerStatus.PID = 0
			return t
		}()}},
		{name: "one still starting", tasks: []swarm.Task{running(spec.TaskTemplate), task(spec.TaskTemplate, swarm.TaskStateStarting, swarm.TaskStateRunning, "")}},
		{name: "an old task still running", tasks: []swarm.Task{running(spec.TaskTemplate), running(spec.TaskTemplate), running(oldSpec)}},
		{name: "update in progress", update: &swarm.UpdateStatus{State: swarm.UpdateStateUpdating}, tasks: []swarm.Task{running(spec.TaskTemplate), running(spec.TaskTemplate)}},
		{name: "paused", update: &swarm.UpdateStatus{State: swarm.UpdateStatePaused, Message: "update paused due to failure"},
			tasks:  []swarm.Task{running(oldSpec), task(spec.TaskTemplate, swarm.TaskStateFailed, swarm.TaskStateShutdown, "unhealthy container")},
			failed: true, reason: "Swarm paused the rollout: update paused due to failure; last task error: unhealthy container"},
		{name: "rolled back", update: &swarm.UpdateStatus{State: swarm.UpdateStateRollbackCompleted, Message: "rollback completed"},
			tasks: []swarm.Task{running(oldSpec)}, failed: true, reason: "Swarm rolled the rollout back: rollback completed"},
		{name: "tasks stopped before the last change are no crash loop", tasks: func() []swarm.Task {
			var ts []swarm.Task
			for i := 0; i < 3; i++ {
				t := task(spec.TaskTemplate, swarm.TaskStateComplete, swarm.TaskStateShutdown, "")
				t.Status.Timestamp = time.Now().Add(-time.Hour)
				ts = append(ts, t)
			}
			return ts
		}()},
		{name: "crash loop", tasks: []swarm.Task{
			task(spec.TaskTemplate, swarm.TaskStateFailed, swarm.TaskStateShutdown, "exit 1"),
			task(spec.TaskTemplate, swarm.TaskStateFailed, swarm.TaskStateShutdown, "exit 1"),
			task(spec.TaskTemplate, swarm.TaskStateFailed, swarm.TaskStateShutdown, "exit 1"),
		}, failed: true, reason: "3 tasks ended before running"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := swarm.Service{Spec: spec, UpdateStatus: tt.update}
			svc.UpdatedAt = time.Now().Add(-time.Minute)
			st := serviceStatus(svc, tt.tasks)
			if st.Converged != tt.converged || st.Failed != tt.failed || !strings.Contains(st.Reason, tt.reason) {
				t.Fatalf("got %+v", st)
			}
		})
	}
}
