package api

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
)

// previewDelete starts deleting a preview; 202 with the preview marked as
// deleting. The worker removes its services, routes, networks and volumes,
// checks none is left, then the preview disappears from the list.
func (h *handler) previewDelete(c *fiber.Ctx, pv *service.Previews, a store.Application) error {
	env, err := pv.Delete(c.UserContext(), callerOf(c).actor(), h.enqueue, a.ID, c.Params("slug"))
	if err != nil {
		return h.failPreview(c, err)
	}
	return c.Status(http.StatusAccepted).JSON(newPreview(service.Preview{Environment: env}))
}
