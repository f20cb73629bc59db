package api

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
)

// Environment is an environment with its latest deployment.
type Environment struct {
	ID               string      `json:"id"`
	Name             string      `json:"name"`
	Kind             string      `json:"kind"`
	Branch           string      `json:"branch,omitempty"`
	PromoteFrom      string      `json:"promote_from,omitempty"`
	Rollback         string      `json:"rollback,omitempty"`
	LatestDeployment *Deployment `json:"latest_deployment"`
	CreatedAt        time.Time   `json:"created_at"`
}

// EnvironmentList is GET /applications/{app}/environments: the
// application's environments, never its previews (GET .../previews).
type EnvironmentList struct {
	Environments []Environment `json:"environments"`
}

func (h *handler) environmentList(c *fiber.Ctx) error {
	ctx, team := c.UserContext(), callerOf(c).token.TeamID
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	envs, err := h.store.ListEnvironments(ctx, team, a.ID)
	if err != nil {
		return h.fail(c, err)
	}
	out := EnvironmentList{Environments: []Environment{}}
	for _, e := range envs {
		if e.Kind != store.KindEnvironment {
			continue // previews are listed by the previews endpoints only
		}
		env := Environment{ID: e.ID, Name: e.Name, Kind: string(e.Kind), Branch: e.Branch, PromoteFrom: e.PromoteFrom, Rollback: e.Rollback, CreatedAt: e.CreatedAt}
		latest, err := h.store.ListDeployments(ctx, team, store.DeploymentFilter{EnvironmentID: e.ID, Limit: 1})
		if err != nil {
			return h.fail(c, err)
		}
		if len(latest) > 0 {
			d := newDeployment(latest[0], e.Name)
			env.LatestDeployment = &d
		}
		out.Environments = append(out.Environments, env)
	}
	return c.JSON(out)
}
