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
	m, _, err := h.savedManifest(c.UserContext(), a.TeamID, a.ID)
	if err != nil {
		return err
	}
	var t page.LinksTab
	if m != nil {
		for _, e := range m.Spec.Exports {
			t.Exports = append(t.Exports, page.ExportRow{Service: e.Service, Applications: e.Applications, Previews: e.Previews})
		}
		for _, im := range m.Spec.Imports {
			t.Imports = append(t.Imports, page.ImportRow{Application: im.Application, Service: im.Service, Environment: im.Environment})
		}
	}
	return h.render(c, http.StatusOK, a.Name+" · Links", page.ApplicationLinks(header, t))
}
