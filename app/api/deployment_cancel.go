package api

import (
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
)

// deploymentCancel stops a deployment that has not finished; one that has
// is 409 deployment_finished.
func (h *handler) deploymentCancel(c *fiber.Ctx) error {
	d, err := service.CancelDeployment(c.UserContext(), h.store, callerOf(c).actor(), h.enqueue, c.Params("deployment"))
	var ie *service.InputError
	if errors.As(err, &ie) && ie.Code == "deployment_finished" {
		return WriteError(c, http.StatusConflict, ie.Code, ie.Message, map[string]any{"field": ie.Field})
	}
	if err != nil {
		return h.fail(c, err)
	}
	return h.writeDeployment(c, http.StatusOK, d)
}
