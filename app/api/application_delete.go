package api

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
)

func (h *handler) applicationDelete(c *fiber.Ctx) error {
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	if err := service.DeleteApplication(c.UserContext(), h.store, callerOf(c).actor(), h.enqueue, a.ID); err != nil {
		return h.fail(c, err)
	}
	return c.SendStatus(http.StatusNoContent)
}
