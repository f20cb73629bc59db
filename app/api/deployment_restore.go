package api

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
)

// deploymentRestore deploys an earlier deployment again exactly as it ran,
// as a new deployment (origin restore); 202 with it.
func (h *handler) deploymentRestore(c *fiber.Ctx) error {
	d, err := service.RestoreDeployment(c.UserContext(), h.store, callerOf(c).actor(), h.enqueue, c.Params("deployment"))
	if err != nil {
		return h.fail(c, err)
	}
	return h.writeDeployment(c, http.StatusAccepted, d)
}
