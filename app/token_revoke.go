package app

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
)

func (h *handler) tokenRevoke(c *fiber.Ctx) error {
	if err := service.RevokeToken(c.UserContext(), h.store, visitorOf(c).actor(), c.Params("token"), h.now()); err != nil {
		return err
	}
	return redirect(c, "/tokens")
}
