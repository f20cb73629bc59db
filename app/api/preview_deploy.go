package api

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
)

// previewDeploy redeploys a preview at its branch head; 202 with the
// queued deployment.
func (h *handler) previewDeploy(c *fiber.Ctx) error {
	pv, err := h.previewService(c)
	if pv == nil {
		return err
	}
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	d, err := pv.Deploy(c.UserContext(), callerOf(c).actor(), h.enqueue, a.ID, c.Params("slug"))
	if err != nil {
		return h.failPreview(c, err)
	}
	return c.Status(http.StatusAccepted).JSON(newDeployment(d, c.Params("slug")))
}
