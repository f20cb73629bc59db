package api

import (
	"github.com/gofiber/fiber/v2"
)

func (h *handler) applicationShow(c *fiber.Ctx) error {
	a, err := h.store.GetApplication(c.UserContext(), callerOf(c).token.TeamID, c.Params("app"))
	if err != nil {
		return h.fail(c, err)
	}
	return c.JSON(newApplication(a))
}
