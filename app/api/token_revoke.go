package api

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
)

func (h *handler) tokenRevoke(c *fiber.Ctx) error {
	if err := service.RevokeToken(c.UserContext(), h.store, callerOf(c).actor(), c.Params("token"), h.now()); err != nil {
		return h.fail(c, err)
	}
	return c.SendStatus(http.StatusNoContent)
}
