package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/views/page"
)

// environmentList is the Environments tab.
func (h *handler) environmentList(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "environments")
	if err != nil {
		return err
	}
	t, err := h.environmentsTab(c, a, nil, "")
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, a.Name+" · Environments", page.ApplicationEnvironments(header, t))
}
