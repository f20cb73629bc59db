package app

import (
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/views/page"
)

// applicationRename renames the application from its Settings tab.
func (h *handler) applicationRename(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "settings")
	if err != nil {
		return err
	}
	name := c.FormValue("name")
	res, err := service.RenameApplication(c.UserContext(), h.store, visitorOf(c).actor(), h.enqueue, a.ID, name, formRevision(c))
	if msg, ok := editErrorMessage(err); ok {
		t, lerr := h.settingsTab(c, a)
		if lerr != nil {
			return lerr
		}
		t.RenameError, t.RenameValue = msg, name
		return h.render(c, formErrorStatus(c), a.Name+" · Settings", page.ApplicationSettings(header, t))
	}
	if err != nil {
		return err
	}
	h.flashOK(c, fmt.Sprintf("Renamed %s to %s (saved as revision %d). Running services keep their names until the next deployment.", a.Name, res.Application.Name, res.Revision))
	return redirect(c, "/applications/"+res.Application.ID+"/settings")
}
