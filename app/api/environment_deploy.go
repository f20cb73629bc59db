package api

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
)

// environmentDeploy requests a deployment of the environment's saved
// manifest; 202 with the queued deployment.
func (h *handler) environmentDeploy(c *fiber.Ctx) error {
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	// An optional body names a one-off branch or commit to read
	// (environment_branch.go); without one the environment's ref is used.
	var req DeployRequest
	if len(c.Body()) > 0 {
		if bad := decode(c.Body(), &req); bad != nil {
			return bad.write(c)
		}
	}
	var d store.Deployment
	if req.Branch != "" || req.Commit != "" {
		d, err = service.RequestDeploymentAt(c.UserContext(), h.store, callerOf(c).actor(), h.enqueue, a.ID, h.environmentName(c, a.ID),
			store.GitRef{Branch: req.Branch, Commit: req.Commit})
	} else {
		d, err = service.RequestDeployment(c.UserContext(), h.store, callerOf(c).actor(), h.enqueue, a.ID, h.environmentName(c, a.ID))
	}
	if err != nil {
		return h.fail(c, err)
	}
	return c.Status(http.StatusAccepted).JSON(newDeployment(d, h.environmentName(c, a.ID)))
}
