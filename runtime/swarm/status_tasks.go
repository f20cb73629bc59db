package swarm

import (
	"time"

	"github.com/docker/docker/api/types/swarm"
)

// taskHistory reads a service's tasks for the status page: when its newest
// running task started, and how many of the tasks Swarm still retains
// ended on their own (failed, rejected or completed), which is how many
// times Swarm had to replace a container lately. Tasks shut down by an
// update or a scale-down are not counted.
func taskHistory(tasks []swarm.Task) (started time.Time, exited int) {
	for _, t := range tasks {
		switch t.Status.State {
		case swarm.TaskStateRunning:
			if t.Status.Timestamp.After(started) {
				started = t.Status.Timestamp
			}
		case swarm.TaskStateFailed, swarm.TaskStateRejected, swarm.TaskStateComplete:
			exited++
		}
	}
	return started, exited
}
