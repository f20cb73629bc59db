package api

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
)

func (h *handler) secretDelete(c *fiber.Ctx) error {
	a, svc, done, err := h.secretRequest(c, nil)
	if done {
		return err
	}
	if err := svc.Delete(c.UserContext(), a.TeamID, a.ID, trimmedName(c), secretActor(c)); err != nil {
		return h.secretFail(c, err)
	}
	return c.SendStatus(http.StatusNoContent)
}
