package api

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
)

// environmentDeploy requests a deployment of the environment's saved
// manifest; 202 with the queued deployment.
func (h *handler) environmentDeploy(c *fiber.Ctx) error {
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	d, err := service.RequestDeployment(c.UserContext(), h.store, callerOf(c).actor(), h.enqueue, a.ID, c.Params("env"))
	if err != nil {
		return h.fail(c, err)
	}
	return c.Status(http.StatusAccepted).JSON(newDeployment(d, c.Params("env")))
}
