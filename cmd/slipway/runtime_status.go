package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

// swarmStatus is the API's read-only view of Docker: one Observe of an
// environment, summarized per service. It never changes anything.
type swarmStatus struct {
	driver *swarm.Driver
}

// newRuntimeReader connects lazily: the Docker client dials on first use,
// so serve starts (and answers docker_unavailable) without Docker.
func newRuntimeReader(logger *slog.Logger) (swarmStatus, error) {
	engine, err := swarm.NewEngine()
	if err != nil {
		return swarmStatus{}, err
	}
	return swarmStatus{driver: swarm.NewDriver(engine, logger)}, nil
}

func (s swarmStatus) ServiceStatus(ctx context.Context, envID string) ([]api.ServiceStatus, error) {
	obs, err := s.driver.Observe(ctx, swarm.EnvRef{ID: envID, ShortID: store.ShortID(envID)})
	if swarm.IsDockerUnavailable(err) {
		return nil, fmt.Errorf("%w: %v", api.ErrRuntimeUnavailable, err)
	}
	if err != nil {
		return nil, err
	}
	return serviceStatuses(swarm.States(obs)), nil
}

// serviceStatuses converts the driver's view to the API's.
func serviceStatuses(states []swarm.ServiceState) []api.ServiceStatus {
	out := make([]api.ServiceStatus, 0, len(states))
	for _, st := range states {
		s := api.ServiceStatus{
			Service: st.Service, Name: st.Name, Image: st.Image, Deployment: st.Deployment,
			Desired: st.Desired, Running: st.Running, UpdateState: st.UpdateState, LastError: st.Reason,
			Health: "starting", ExitedTasks: st.Exited,
		}
		if !st.StartedAt.IsZero() {
			started := st.StartedAt
			s.StartedAt = &started
		}
		// The pipeline pins images by digest (image@sha256:...).
		if _, digest, ok := strings.Cut(st.Image, "@"); ok {
			s.Digest = digest
		}
		switch {
		case st.Failed:
			s.Health = "failed"
		case st.Converged:
			s.Health = "healthy"
		}
		out = append(out, s)
	}
	return out
}

// Nodes is the API's view of the Swarm's nodes (api.NodeReader).
func (s swarmStatus) Nodes(ctx context.Context) ([]api.Node, error) {
	list, err := s.driver.Nodes(ctx)
	if swarm.IsDockerUnavailable(err) {
		return nil, fmt.Errorf("%w: %v", api.ErrRuntimeUnavailable, err)
	}
	if err != nil {
		return nil, err
	}
	out := make([]api.Node, 0, len(list))
	for _, n := range list {
		out = append(out, api.Node{
			ID: n.ID, Hostname: n.Hostname, Role: n.Role, Leader: n.Leader, Availability: n.Availability, State: n.State,
			Address: n.Address, EngineVersion: n.EngineVersion, CPUs: float64(n.NanoCPUs) / 1e9, MemoryBytes: n.MemoryBytes, Labels: n.Labels,
		})
	}
	return out, nil
}
