package app

import (
	"github.com/gofiber/fiber/v2"
)

// logoutCreate ends the session in the database, not only in the browser.
func (h *handler) logoutCreate(c *fiber.Ctx) error {
	if v := visitorOf(c); v.signedIn() {
		if err := h.store.DeleteSession(c.UserContext(), v.session.ID); err != nil {
			return err
		}
	}
	h.clearCookie(c, sessionCookie)
	return redirect(c, "/login")
}
