package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
	"github.com/slipwayhq/slipway/views/partial"
)

// deploymentShow is a deployment's page; htmx polls it for the timeline
// alone while the deployment runs.
func (h *handler) deploymentShow(c *fiber.Ctx) error {
	a, header, d, err := h.loadDeployment(c, "deployments")
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	env, err := h.store.GetEnvironment(ctx, a.TeamID, d.EnvironmentID)
	if err != nil {
		return err
	}
	who, err := h.people(ctx, a.TeamID)
	if err != nil {
		return err
	}
	v, err := h.deploymentDetail(ctx, d, env, who)
	if err != nil {
		return err
	}
	if isFragment(c) {
		return h.render(c, http.StatusOK, "Deployment", partial.DeploymentTimeline(v))
	}
	if h.logs != nil {
		services, err := h.deployedServices(ctx, env)
		if err != nil {
			return err
		}
		for _, s := range services {
			v.Logs = append(v.Logs, partial.LogLink{Service: s, URL: serviceLogsURL(a.ID, env.Name, s)})
		}
	}
	return h.render(c, http.StatusOK, a.Name+" · Deployment", page.DeploymentDetail(header, v))
}

// loadDeployment reads :app and :deployment; a deployment of another
// application (or team) is not found.
func (h *handler) loadDeployment(c *fiber.Ctx, tab string) (store.Application, page.AppHeader, store.Deployment, error) {
	a, header, err := h.loadApplication(c, tab)
	if err != nil {
		return a, header, store.Deployment{}, err
	}
	d, err := h.store.GetDeployment(c.UserContext(), a.TeamID, c.Params("deployment"))
	if err != nil {
		return a, header, d, err
	}
	if d.ApplicationID != a.ID {
		return a, header, d, fiber.ErrNotFound
	}
	return a, header, d, nil
}
