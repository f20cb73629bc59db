package app

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
)

// deploymentCancel stops a deployment that has not finished.
func (h *handler) deploymentCancel(c *fiber.Ctx) error {
	return h.deploymentAction(c, func(d store.Deployment, _ store.Environment) (store.Deployment, error) {
		return service.CancelDeployment(c.UserContext(), h.store, visitorOf(c).actor(), h.enqueue, d.ID)
	})
}
