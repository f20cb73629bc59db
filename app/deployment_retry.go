package app

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
)

// deploymentRetry deploys the deployment's environment again from the
// saved manifest.
func (h *handler) deploymentRetry(c *fiber.Ctx) error {
	return h.deploymentAction(c, func(d store.Deployment, env store.Environment) (store.Deployment, error) {
		return service.RequestDeployment(c.UserContext(), h.store, visitorOf(c).actor(), h.enqueue, d.ApplicationID, env.Name)
	})
}
