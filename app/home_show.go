package app

import "github.com/gofiber/fiber/v2"

// homeShow sends the visitor where they can start: first run on an empty
// installation, the login page, or the team's applications.
func (h *handler) homeShow(c *fiber.Ctx) error {
	v := visitorOf(c)
	switch {
	case v.current != nil:
		return redirect(c, "/applications")
	case v.signedIn():
		return redirect(c, "/account")
	}
	n, err := h.store.CountUsers(c.UserContext())
	if err != nil {
		return err
	}
	if n == 0 {
		return redirect(c, "/setup")
	}
	return redirect(c, "/login")
}
