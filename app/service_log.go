package app

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

// ServiceLogReader reads what a service of an environment wrote, from
// Docker. It is read-only and addressed by the environment id and the
// manifest's service name, which handlers resolve from the store: a
// visitor never names a Docker object. It hands lines to emit merged
// across replicas in time order: the tail in one call, then (Follow) each
// batch of new lines until ctx ends.
type ServiceLogReader interface {
	ServiceLogs(ctx context.Context, envID, service string, opts LogOptions, emit func([]LogLine) error) error
}

// LogOptions selects what a ServiceLogReader reads.
type LogOptions struct {
	Follow bool
	Tail   int       // the last lines only; 0 reads everything
	Since  time.Time // only lines written after it; zero: no bound
}

// LogLine is one line of a service's output.
type LogLine struct {
	Time   time.Time
	Task   string // the replica, "web.2"
	Node   string // the node's hostname
	Stderr bool
	Text   string
}

// ErrServiceNotRunning is what a ServiceLogReader wraps when Docker has no
// such service for the environment (never deployed, or stopped).
var ErrServiceNotRunning = errors.New("service_not_running")

// serviceTarget is a service whose logs a visitor asked for, checked
// against the team's store.
type serviceTarget struct {
	app     store.Application
	env     store.Environment
	service string
}

// serviceTargetOf loads :app, then the service target within it.
func (h *handler) serviceTargetOf(c *fiber.Ctx) (serviceTarget, error) {
	a, _, err := h.loadApplication(c, "overview")
	if err != nil {
		return serviceTarget{}, err
	}
	return h.loadServiceTarget(c, a)
}

// loadServiceTarget resolves :app, :environment (a name) and :service
// within the visitor's team: the service must be one the environment's
// running (or, before any ran, latest) manifest declares.
func (h *handler) loadServiceTarget(c *fiber.Ctx, a store.Application) (serviceTarget, error) {
	ctx := c.UserContext()
	env, err := h.store.GetEnvironmentByName(ctx, a.TeamID, a.ID, c.Params("environment"))
	if err != nil {
		return serviceTarget{}, err
	}
	services, err := h.deployedServices(ctx, env)
	if err != nil {
		return serviceTarget{}, err
	}
	name := c.Params("service")
	for _, s := range services {
		if s == name {
			return serviceTarget{app: a, env: env, service: name}, nil
		}
	}
	return serviceTarget{}, fiber.ErrNotFound
}

// deployedServices names the services of env's running manifest.
func (h *handler) deployedServices(ctx context.Context, env store.Environment) ([]string, error) {
	m, err := h.deployedManifest(ctx, env)
	if m == nil {
		return nil, err
	}
	names := make([]string, len(m.Spec.Services))
	for i, s := range m.Spec.Services {
		names[i] = s.Name
	}
	return names, nil
}

// deployedManifest is env's running manifest (the latest successful
// deployment's, else the latest deployment's), nil when there is none.
func (h *handler) deployedManifest(ctx context.Context, env store.Environment) (*manifest.Manifest, error) {
	d, err := h.store.LatestSucceededDeployment(ctx, env.TeamID, env.ID)
	if errors.Is(err, store.ErrNotFound) {
		ds, lerr := h.store.ListDeployments(ctx, env.TeamID, store.DeploymentFilter{EnvironmentID: env.ID, Limit: 1})
		if lerr != nil {
			return nil, lerr
		}
		if len(ds) == 0 {
			return nil, nil
		}
		d, err = ds[0], nil
	}
	if err != nil {
		return nil, err
	}
	if d.RenderedManifest == nil {
		return nil, nil
	}
	var m manifest.Manifest
	if err := json.Unmarshal(d.RenderedManifest, &m); err != nil {
		return nil, nil
	}
	return &m, nil
}

// serviceLogsURL is the page of one service's logs.
func serviceLogsURL(appID, env, service string) string {
	return "/applications/" + appID + "/environments/" + env + "/services/" + service + "/logs"
}
