package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/views/partial"
)

// applicationDeleteForm is the list's typed-name delete form for one
// application, which htmx loads in place of the row's Delete… link (the
// list does not carry a form per row). Without htmx it sends the visitor
// to the Settings page's delete, guarded by the same typed name.
func (h *handler) applicationDeleteForm(c *fiber.Ctx) error {
	a, err := h.store.GetApplication(c.UserContext(), visitorOf(c).current.Team.ID, c.Params("app"))
	if err != nil {
		return err
	}
	if !isFragment(c) {
		return redirect(c, "/applications/"+a.ID+"/settings#delete")
	}
	return h.render(c, http.StatusOK, a.Name, partial.ApplicationDeleteForm(a.ID, a.Name, applicationFilter(c.Query)))
}
