package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/views/page"
)

func (h *handler) applicationCreate(c *fiber.Ctx) error {
	name := c.FormValue("name")
	a, err := service.CreateApplication(c.UserContext(), h.store, visitorOf(c).actor(), name)
	if errs, ok := fieldErrors(err); ok {
		list, err := h.firstApplicationPage(c)
		if err != nil {
			return err
		}
		return h.render(c, http.StatusUnprocessableEntity, "Applications", page.Applications(list, name, errs, editorFor(h.viewContext(c), "", 0, "")))
	}
	if err != nil {
		return err
	}
	// Its Manifest tab starts from a manifest naming it, ready to edit.
	h.flashOK(c, "Created application "+a.Name+". It has no manifest yet: edit the starter below and save it.")
	return redirect(c, "/applications/"+a.ID+"/manifest")
}
