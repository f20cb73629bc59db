package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/views/partial"
)

// applicationDelete deletes and, for htmx, answers with the refreshed list.
func (h *handler) applicationDelete(c *fiber.Ctx) error {
	if err := service.DeleteApplication(c.UserContext(), h.store, visitorOf(c).actor(), h.enqueue, c.Params("app")); err != nil {
		return err
	}
	if c.Get("HX-Request") != "true" {
		return redirect(c, "/applications")
	}
	rows, err := h.applicationRows(c)
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, "Applications", partial.ApplicationList(rows))
}
