package api

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
)

// previewDeploy redeploys a preview at its branch head; 202 with the
// queued deployment.
func (h *handler) previewDeploy(c *fiber.Ctx, pv *service.Previews, a store.Application) error {
	d, err := pv.Deploy(c.UserContext(), callerOf(c).actor(), h.enqueue, a.ID, c.Params("slug"))
	if err != nil {
		return h.failPreview(c, err)
	}
	return c.Status(http.StatusAccepted).JSON(newDeployment(d, c.Params("slug")))
}
