package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
)

// csrfHeader is what htmx sends (from the hx-headers the layout sets).
const csrfHeader = "X-CSRF-Token"

// checkCSRF rejects every unsafe request whose token does not match the
// session's synchronizer token (or, before sign-in, the double-submit
// cookie). SameSite=Lax already stops most cross-site posts; this also
// covers same-site subdomains and older browsers.
func (h *handler) checkCSRF(c *fiber.Ctx) error {
	if safeMethod(c.Method()) {
		return c.Next()
	}
	token := c.Get(csrfHeader)
	if token == "" {
		token = c.FormValue("_csrf")
	}
	if !auth.EqualSecret(token, visitorOf(c).csrf) {
		return h.renderError(c, http.StatusForbidden, "csrf_invalid",
			"This form has expired or came from another site. Go back, reload the page and try again.")
	}
	return c.Next()
}
