package app

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
)

// deploymentRetry deploys the deployment's environment again from the
// saved manifest; a preview's deployment redeploys the preview at its
// branch head, as preview deploy does (environment commands never act on
// previews).
func (h *handler) deploymentRetry(c *fiber.Ctx) error {
	return h.deploymentAction(c, func(d store.Deployment, env store.Environment) (store.Deployment, error) {
		if env.Kind == store.KindPreview {
			previews := h.previews
			if previews == nil {
				// Redeploying needs neither the limits nor branch listings.
				previews = &service.Previews{Store: h.store}
			}
			return previews.Deploy(c.UserContext(), visitorOf(c).actor(), h.enqueue, d.ApplicationID, env.Slug)
		}
		return service.RequestDeployment(c.UserContext(), h.store, visitorOf(c).actor(), h.enqueue, d.ApplicationID, env.Name)
	})
}
