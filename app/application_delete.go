package app

import (
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/views/partial"
)

// applicationDelete deletes and, for htmx, answers with the refreshed
// list, filtered as the one the visitor deleted from (its q and state
// travel with the delete form).
func (h *handler) applicationDelete(c *fiber.Ctx) error {
	err := service.DeleteApplication(c.UserContext(), h.store, visitorOf(c).actor(), h.enqueue, c.Params("app"))
	var ie *service.InputError
	if errors.As(err, &ie) {
		// deployment_in_progress: the page says which deployment to wait
		// for or cancel.
		return fiber.NewError(http.StatusConflict, ie.Message+" ("+ie.Code+")")
	}
	if err != nil {
		return err
	}
	f := applicationFilter(c.FormValue)
	if c.Get("HX-Request") != "true" {
		return redirect(c, f.URL())
	}
	rows, err := h.applicationRowsFiltered(c, f)
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, "Applications", partial.ApplicationList(rows, f))
}
