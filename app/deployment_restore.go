package app

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
)

// deploymentRestore runs the environment exactly as this deployment did.
func (h *handler) deploymentRestore(c *fiber.Ctx) error {
	return h.deploymentAction(c, func(d store.Deployment, _ store.Environment) (store.Deployment, error) {
		return service.RestoreDeployment(c.UserContext(), h.store, visitorOf(c).actor(), h.enqueue, d.ID)
	})
}
