package api

import (
	"time"

	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
)

// ServiceStatus is one service as Docker runs it now.
type ServiceStatus struct {
	Service string `json:"service"`
	// Name is the Swarm service name.
	Name       string `json:"name"`
	Image      string `json:"image"`
	Digest     string `json:"digest,omitempty"`
	Deployment string `json:"deployment,omitempty"`
	Desired    uint64 `json:"desired_replicas"`
	Running    uint64 `json:"running_replicas"`
	// Health is healthy (converged), failed, or starting.
	Health      string `json:"health"`
	UpdateState string `json:"update_state,omitempty"`
	LastError   string `json:"last_error,omitempty"`
	// StartedAt is when the newest running task started; ExitedTasks how
	// many of the tasks Swarm retains ended on their own (restarts).
	StartedAt   *time.Time `json:"started_at,omitempty"`
	ExitedTasks int        `json:"exited_tasks,omitempty"`
}

// EnvironmentStatus is one environment: its latest deployment and, read
// live from Docker, its services.
type EnvironmentStatus struct {
	Name             string          `json:"name"`
	ID               string          `json:"id"`
	LatestDeployment *Deployment     `json:"latest_deployment"`
	Services         []ServiceStatus `json:"services"`
	// Error is docker_unavailable when Docker could not be read; the rest
	// of the answer still stands.
	Error        string `json:"error,omitempty"`
	ErrorMessage string `json:"error_message,omitempty"`
}

// ApplicationStatus is GET /applications/{app}/status[?env=E]: the
// application's environments, never its previews.
type ApplicationStatus struct {
	Application  Application         `json:"application"`
	Environments []EnvironmentStatus `json:"environments"`
}

// applicationStatus reads each environment's services from Docker. Docker
// being unreachable is reported per environment in the body, not as a
// failed request: the database half of the answer is still useful.
func (h *handler) applicationStatus(c *fiber.Ctx) error {
	ctx, team := c.UserContext(), callerOf(c).token.TeamID
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	envs, err := h.store.ListEnvironments(ctx, team, a.ID)
	if err != nil {
		return h.fail(c, err)
	}
	only := c.Query("env")
	out := ApplicationStatus{Application: newApplication(a), Environments: []EnvironmentStatus{}}
	for _, e := range envs {
		// Previews never appear among the environments (preview show).
		if e.Kind != store.KindEnvironment || (only != "" && e.Name != only) {
			continue
		}
		es := EnvironmentStatus{Name: e.Name, ID: e.ID, Services: []ServiceStatus{}}
		latest, err := h.store.ListDeployments(ctx, team, store.DeploymentFilter{EnvironmentID: e.ID, Limit: 1})
		if err != nil {
			return h.fail(c, err)
		}
		if len(latest) > 0 {
			d := newDeployment(latest[0], e.Name)
			es.LatestDeployment = &d
		}
		switch {
		case h.runtime == nil:
			es.Error, es.ErrorMessage = "docker_unavailable", "this server has no Docker connection configured"
		default:
			svcs, err := h.runtime.ServiceStatus(ctx, e.ID)
			switch {
			case errors.Is(err, ErrRuntimeUnavailable):
				es.Error, es.ErrorMessage = "docker_unavailable", err.Error()
			case err != nil:
				return h.fail(c, err)
			default:
				es.Services = append(es.Services, svcs...)
			}
		}
		out.Environments = append(out.Environments, es)
	}
	if only != "" && len(out.Environments) == 0 {
		return h.fail(c, service.EnvironmentNotFound(only))
	}
	return c.JSON(out)
}
