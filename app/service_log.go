package app

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

// The log reader and its types live in the api package, which serves
// the same logs to tokens.
type (
	ServiceLogReader = api.ServiceLogReader
	LogOptions       = api.LogOptions
	LogLine          = api.LogLine
)

// ErrServiceNotRunning is api.ErrServiceNotRunning.
var ErrServiceNotRunning = api.ErrServiceNotRunning

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
