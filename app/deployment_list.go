package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
	"github.com/slipwayhq/slipway/views/partial"
)

// deploymentList is the Deployments tab: the latest 100, newest first.
func (h *handler) deploymentList(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "deployments")
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	ds, err := h.store.ListDeployments(ctx, a.TeamID, store.DeploymentFilter{ApplicationID: a.ID, Limit: 100})
	if err != nil {
		return err
	}
	envs, err := h.store.ListEnvironments(ctx, a.TeamID, a.ID)
	if err != nil {
		return err
	}
	byID := map[string]store.Environment{}
	for _, e := range envs {
		byID[e.ID] = e
	}
	who, err := h.people(ctx, a.TeamID)
	if err != nil {
		return err
	}
	live := map[string]string{} // environment id -> its live deployment
	for _, e := range envs {
		if live[e.ID], err = h.liveDeployment(ctx, e); err != nil {
			return err
		}
	}
	rows := make([]partial.DeploymentView, len(ds))
	for i, d := range ds {
		env := byID[d.EnvironmentID]
		rows[i] = h.deploymentView(d, env, who)
		describeDeployment(&rows[i], d, env, live[env.ID])
	}
	return h.render(c, http.StatusOK, a.Name+" · Deployments", page.ApplicationDeployments(header, rows))
}
