package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
)

// deploymentList lists the application's deployments, newest first;
// ?env=NAME keeps one environment's, ?limit=N at most N (default 50).
func (h *handler) deploymentList(c *fiber.Ctx) error {
	ctx, team := c.UserContext(), callerOf(c).token.TeamID
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	f := store.DeploymentFilter{ApplicationID: a.ID, Limit: c.QueryInt("limit", 50)}
	if name := c.Query("env"); name != "" {
		env, err := h.store.GetEnvironmentByName(ctx, team, a.ID, name)
		if err != nil {
			return h.fail(c, err)
		}
		f.EnvironmentID = env.ID
	}
	ds, err := h.store.ListDeployments(ctx, team, f)
	if err != nil {
		return h.fail(c, err)
	}
	names, err := h.environmentNames(ctx, team, a.ID)
	if err != nil {
		return h.fail(c, err)
	}
	out := DeploymentList{Deployments: []Deployment{}}
	for _, d := range ds {
		out.Deployments = append(out.Deployments, newDeployment(d, names[d.EnvironmentID]))
	}
	return c.JSON(out)
}
