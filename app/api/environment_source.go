package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
)

// SourceRequest is the body of PUT .../environments/{env}/source: exactly
// one of promote_from (an environment name) and tracking.
type SourceRequest struct {
	PromoteFrom string `json:"promote_from,omitempty"`
	Tracking    bool   `json:"tracking,omitempty"`
}

// EnvironmentSource is an environment's source after a change.
type EnvironmentSource struct {
	Environment string `json:"environment"`
	// PromoteFrom is the source environment's name, "" when tracking.
	PromoteFrom string `json:"promote_from"`
}

// environmentSource changes where an undeclared environment deploys from.
func (h *handler) environmentSource(c *fiber.Ctx) error {
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	var req SourceRequest
	if bad := decode(c.Body(), &req); bad != nil {
		return bad.write(c)
	}
	env, err := service.SetEnvironmentSource(c.UserContext(), h.store, callerOf(c).actor(), a.ID, h.environmentName(c, a.ID),
		service.SourceOptions{PromoteFrom: req.PromoteFrom, Tracking: req.Tracking})
	if err != nil {
		return h.fail(c, err)
	}
	out := EnvironmentSource{Environment: env.Name}
	if env.PromoteFrom != "" {
		if src, err := h.store.GetEnvironment(c.UserContext(), env.TeamID, env.PromoteFrom); err == nil {
			out.PromoteFrom = src.Name
		}
	}
	return c.JSON(out)
}
