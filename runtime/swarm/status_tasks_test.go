package swarm

import (
	"testing"
	"time"

	"github.com/docker/docker/api/types/swarm"
)

// TestStates_TaskHistory: the status read reports when the newest running
// task started and how many retained tasks ended on their own; tasks an
// update shut down are not restarts, and other services' tasks not counted.
func TestStates_TaskHistory(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	task := func(service string, state swarm.TaskState, at time.Time) swarm.Task {
		return swarm.Task{ServiceID: service, DesiredState: swarm.TaskStateRunning, Status: swarm.TaskStatus{State: state, Timestamp: at}}
	}
	svc := func(id, name string) swarm.Service {
		return swarm.Service{ID: id, Spec: swarm.ServiceSpec{
			Annotations:  swarm.Annotations{Name: "slw-x-" + name, Labels: map[string]string{LabelService: name}},
			TaskTemplate: swarm.TaskSpec{ContainerSpec: &swarm.ContainerSpec{Image: "sha256:abc"}},
		}}
	}
	obs := Observed{
		Services: []swarm.Service{svc("s1", "web"), svc("s2", "idle")},
		Tasks: []swarm.Task{
			task("s1", swarm.TaskStateRunning, t0.Add(time.Minute)),
			task("s1", swarm.TaskStateRunning, t0.Add(5*time.Minute)),
			task("s1", swarm.TaskStateFailed, t0.Add(4*time.Minute)),
			task("s1", swarm.TaskStateComplete, t0.Add(3*time.Minute)),
			task("s1", swarm.TaskStateShutdown, t0.Add(2*time.Minute)),
			task("s2", swarm.TaskStateFailed, t0),
		},
	}
	got := map[string]ServiceState{}
	for _, s := range States(obs) {
		got[s.Service] = s
	}
	if web := got["web"]; !web.StartedAt.Equal(t0.Add(5*time.Minute)) || web.Exited != 2 || web.Image != "sha256:abc" {
		t.Errorf("web: started %v, exited %d, image %q; want %v, 2, sha256:abc", web.StartedAt, web.Exited, web.Image, t0.Add(5*time.Minute))
	}
	if idle := got["idle"]; !idle.StartedAt.IsZero() || idle.Exited != 1 {
		t.Errorf("idle: started %v, exited %d; want zero, 1", idle.StartedAt, idle.Exited)
	}
}
