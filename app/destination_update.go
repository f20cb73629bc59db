package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
)

// destinationUpdate saves a destination's events, threshold, enabled
// state and, when given, new credentials.
func (h *handler) destinationUpdate(c *fiber.Ctx) error {
	if h.notify == nil {
		return fiber.ErrServiceUnavailable
	}
	if _, err := h.notify.Update(c.UserContext(), visitorOf(c).current.Team.ID, c.Params("destination"), destinationForm(c, false)); err != nil {
		return h.destinationRefused(c, err)
	}
	return c.Redirect("/notifications?notice=saved", http.StatusSeeOther)
}

// destinationDelete removes a destination and its deliveries.
func (h *handler) destinationDelete(c *fiber.Ctx) error {
	if h.notify == nil {
		return fiber.ErrServiceUnavailable
	}
	if err := h.notify.Delete(c.UserContext(), visitorOf(c).current.Team.ID, c.Params("destination")); err != nil {
		return err
	}
	return c.Redirect("/notifications?notice=deleted", http.StatusSeeOther)
}
