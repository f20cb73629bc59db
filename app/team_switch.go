package app

import (
	"github.com/gofiber/fiber/v2"
)

// teamSwitch makes :team the session's current team. The store refuses a
// team the user is not a member of, which surfaces as 404.
func (h *handler) teamSwitch(c *fiber.Ctx) error {
	if err := h.store.SetSessionTeam(c.UserContext(), visitorOf(c).session.ID, c.Params("team")); err != nil {
		return err
	}
	return redirect(c, "/applications")
}
