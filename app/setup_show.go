package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/views/page"
)

// setupShow offers first-run sign-up while the installation has no user.
func (h *handler) setupShow(c *fiber.Ctx) error {
	n, err := h.store.CountUsers(c.UserContext())
	if err != nil {
		return err
	}
	if n > 0 {
		return redirect(c, "/login")
	}
	// A setup link (slipway dev prints one) carries the token.
	return h.render(c, http.StatusOK, "First run", page.FirstRun(page.SignupForm{Token: c.Query("token")}))
}
