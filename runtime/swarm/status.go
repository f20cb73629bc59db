package swarm

import (
	"context"
	"strings"
	"time"

	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
)

// ServiceState is one service as the API, CLI and dashboard show it.
type ServiceState struct {
	// Service is the manifest name, Name the Swarm name.
	Service    string
	Name       string
	Image      string
	Deployment string
	Desired    uint64
	// Running counts tasks of the current spec that run and, when the
	// service has a health check, passed it.
	Running     uint64
	UpdateState string
	Converged   bool
	Failed      bool
	Reason      string
	// StartedAt is when the newest running task started (zero when none
	// runs); Exited counts the retained tasks that ended on their own.
	StartedAt time.Time
	Exited    int
}

// States summarizes the services of one Observe (job runs excluded). It
// makes no Engine call, so a status page costs one Observe.
func States(obs Observed) []ServiceState {
	var out []ServiceState
	for _, svc := range obs.Services {
		if svc.Spec.Labels[LabelJob] != "" {
			continue
		}
		tasks := obs.TasksOf(svc.ID)
		st := serviceStatus(svc, tasks)
		s := ServiceState{
			Service:    svc.Spec.Labels[LabelService],
			Name:       svc.Spec.Name,
			Deployment: svc.Spec.Labels[LabelDeployment],
			Desired:    st.Desired,
			Running:    st.Running,
			Converged:  st.Converged,
			Failed:     st.Failed,
			Reason:     st.Reason,
		}
		if why := volumeNodeReason(svc, obs.UnavailableNodes); why != "" && !s.Converged {
			s.Failed, s.Reason = true, why
		}
		if cs := svc.Spec.TaskTemplate.ContainerSpec; cs != nil {
			s.Image = cs.Image
		}
		s.StartedAt, s.Exited = taskHistory(tasks)
		if svc.UpdateStatus != nil {
			s.UpdateState = string(svc.UpdateStatus.State)
		}
		out = append(out, s)
	}
	return out
}

// ServiceEvent says that a Slipway service changed; the reconciler maps
// Name to its environment (names are slw-<env short id>-...) and scans it.
type ServiceEvent struct {
	ID     string
	Name   string
	Action string
}

// EventSource is the Engine's event stream; *client.Client implements it.
// It is kept apart from Engine so logic-test fakes need not stream.
type EventSource interface {
	Events(ctx context.Context, options events.ListOptions) (<-chan events.Message, <-chan error)
}

// ServiceEvents streams create, update and remove events of Slipway's
// services (named slw-...) until ctx ends or the stream fails; the error
// channel then carries the reason (docker_unavailable when the daemon went
// away), and the caller reconnects with backoff.
func ServiceEvents(ctx context.Context, src EventSource) (<-chan ServiceEvent, <-chan error) {
	msgs, errs := src.Events(ctx, events.ListOptions{Filters: filters.NewArgs(filters.Arg("type", string(events.ServiceEventType)))})
	out := make(chan ServiceEvent)
	outErr := make(chan error, 1)
	go func() {
		defer close(out)
		for {
			select {
			case m := <-msgs:
				name := m.Actor.Attributes["name"]
				if !strings.HasPrefix(name, "slw-") {
					continue
				}
				select {
				case out <- ServiceEvent{ID: m.Actor.ID, Name: name, Action: string(m.Action)}:
				case <-ctx.Done():
					return
				}
			case err := <-errs:
				if ctx.Err() == nil {
					outErr <- engineErr("docker events", err)
				}
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, outErr
}
