package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
)

// previewDeploy redeploys a preview at its branch head.
func (h *handler) previewDeploy(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "previews")
	if err != nil {
		return err
	}
	if h.previews == nil {
		return fiber.NewError(http.StatusServiceUnavailable, "This server does not run previews (previews_unavailable).")
	}
	slug := c.Params("slug")
	d, err := h.previews.Deploy(c.UserContext(), visitorOf(c).actor(), h.enqueue, a.ID, slug)
	if msg, ok := editErrorMessage(err); ok {
		return h.previewRowError(c, a, header, slug, msg)
	}
	if err != nil {
		return err
	}
	return redirect(c, "/applications/"+a.ID+"/deployments/"+d.ID)
}
