package api

import (
	"fmt"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
)

// EnvironmentDeleted is the answer to DELETE .../environments/{env}: the
// row is gone and the worker tears down what runs. Named volumes of an
// environment are retained (they hold data); a preview's are removed.
type EnvironmentDeleted struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	Kind            string `json:"kind"`
	VolumesRetained bool   `json:"volumes_retained"`
	Message         string `json:"message"`
}

// environmentDelete deletes an environment; 202 since the teardown of its
// services, networks, configs and secrets is queued in the same transaction.
func (h *handler) environmentDelete(c *fiber.Ctx) error {
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	d, err := service.DeleteEnvironment(c.UserContext(), h.store, callerOf(c).actor(), h.enqueue, a.ID, h.environmentName(c, a.ID))
	if err != nil {
		return h.fail(c, err)
	}
	msg := fmt.Sprintf("%s deleted; its services, networks, configs and secrets are being removed. Named volumes are retained.", d.Environment.Name)
	if !d.VolumesRetained {
		msg = fmt.Sprintf("preview %s deleted; its services and volumes are being removed.", d.Environment.Name)
	}
	return c.Status(http.StatusAccepted).JSON(EnvironmentDeleted{
		ID: d.Environment.ID, Name: d.Environment.Name, Kind: string(d.Environment.Kind),
		VolumesRetained: d.VolumesRetained, Message: msg,
	})
}
