package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/views/page"
)

// linkList is the Links tab: the saved manifest's exports and imports.
func (h *handler) linkList(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "links")
	if err != nil {
		return err
	}
	t, err := h.linksTab(c, a)
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, a.Name+" · Links", page.ApplicationLinks(header, t))
}
