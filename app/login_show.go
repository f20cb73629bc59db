package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/views/page"
)

func (h *handler) loginShow(c *fiber.Ctx) error {
	if visitorOf(c).signedIn() {
		return redirect(c, safeNext(c.Query("next")))
	}
	return h.render(c, http.StatusOK, "Log in", page.Login(page.LoginForm{Next: c.Query("next")}))
}

// safeNext keeps post-login redirects on this site: only a local absolute
// path, never "//host" or a scheme.
func safeNext(next string) string {
	if len(next) < 1 || next[0] != '/' || (len(next) > 1 && (next[1] == '/' || next[1] == '\\')) {
		return "/"
	}
	return next
}
