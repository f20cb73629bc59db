package usage

import (
	"context"
	"fmt"

	"github.com/docker/docker/api/types/filters"
	dockerswarm "github.com/docker/docker/api/types/swarm"

	"github.com/slipwayhq/slipway/runtime/swarm"
)

// ServiceTasks is one service's tasks, Swarm-wide.
type ServiceTasks struct {
	Key     ServiceKey
	Desired uint64
	// Running counts tasks of the current spec that run and passed their
	// health check; Exited the retained tasks that ended on their own.
	Running uint64
	Exited  int
	// Healthy is false when the service runs fewer tasks than it should,
	// or Swarm gave up on it; Reason says why.
	Healthy bool
	Reason  string
	// Updating is true while a rolling update is in progress.
	Updating bool
}

// ClusterTasks reads every Slipway service and its tasks from a manager
// (deployment jobs excluded).
func ClusterTasks(ctx context.Context, eng swarm.Engine) ([]ServiceTasks, error) {
	services, err := eng.ServiceList(ctx, dockerswarm.ServiceListOptions{Filters: filters.NewArgs(filters.Arg("label", swarm.LabelManaged+"=true"))})
	if err != nil {
		return nil, fmt.Errorf("list services: %w", err)
	}
	tasks, err := eng.TaskList(ctx, dockerswarm.TaskListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	var out []ServiceTasks
	for _, svc := range services {
		l := svc.Spec.Labels
		if l[swarm.LabelService] == "" || l[swarm.LabelJob] != "" || l[labelRun] != "" {
			continue
		}
		var own []dockerswarm.Task
		for _, t := range tasks {
			if t.ServiceID == svc.ID {
				own = append(own, t)
			}
		}
		for _, st := range swarm.States(swarm.Observed{Services: []dockerswarm.Service{svc}, Tasks: own}) {
			out = append(out, ServiceTasks{
				Key:     ServiceKey{TeamID: l[swarm.LabelTeam], EnvironmentID: l[swarm.LabelEnv], Service: st.Service},
				Desired: st.Desired, Running: st.Running, Exited: st.Exited,
				Healthy:  !st.Failed && st.Running >= st.Desired,
				Reason:   st.Reason,
				Updating: st.UpdateState == string(dockerswarm.UpdateStateUpdating) || st.UpdateState == string(dockerswarm.UpdateStateRollbackStarted),
			})
		}
	}
	return out, nil
}
