package api

import (
	"github.com/gofiber/fiber/v2"
)

func (h *handler) applicationShow(c *fiber.Ctx) error {
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	out := newApplication(a)
	// Repository-backed applications show their sync state (application_repository.go).
	if out.Repository, err = h.repositoryStatus(c.UserContext(), a.TeamID, a.ID); err != nil {
		return h.fail(c, err)
	}
	return c.JSON(out)
}
