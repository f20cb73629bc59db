package api

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
)

func (h *handler) secretDelete(c *fiber.Ctx) error {
	// The application first: another team's is 404 whatever else.
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	svc, err := h.secretService(c)
	if svc == nil {
		return err
	}
	if err := svc.Delete(c.UserContext(), a.TeamID, a.ID, trimmedName(c)); err != nil {
		return h.secretFail(c, err)
	}
	return c.SendStatus(http.StatusNoContent)
}
