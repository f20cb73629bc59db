package app

import (
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/views/page"
)

// setupCreate creates the first owner and team, then signs them in. It
// needs the installation's setup token; guesses are rate limited like
// logins (per client address), and once an owner exists the form is gone.
func (h *handler) setupCreate(c *fiber.Ctx) error {
	ctx := c.UserContext()
	form := page.SignupForm{Email: c.FormValue("email"), TeamName: c.FormValue("team")}
	req := service.SignupRequest{
		Email: form.Email, Password: c.FormValue("password"), TeamName: form.TeamName,
		FirstRun: true, SetupToken: c.FormValue("token"),
	}
	fail := func(status int, err error) error {
		form.Errors, _ = fieldErrors(err)
		return h.render(c, status, "First run", page.FirstRun(form))
	}
	if err := service.CheckSignup(req); err != nil {
		if _, ok := fieldErrors(err); ok {
			return fail(http.StatusUnprocessableEntity, err)
		}
		return err
	}
	if n, err := h.store.CountUsers(ctx); err != nil {
		return err
	} else if n > 0 {
		return redirect(c, "/login")
	}
	allowed, err := h.limiter.Allow(ctx, "setup\x00"+c.IP())
	if err != nil {
		return err
	}
	if !allowed {
		h.log.WarnContext(ctx, "setup rate limited", "ip", c.IP())
		c.Set(fiber.HeaderRetryAfter, "60")
		return fail(http.StatusTooManyRequests, &service.InputError{Field: "", Code: "rate_limited", Message: "Too many setup attempts from this address. Wait a minute and try again."})
	}
	user, team, err := service.Signup(ctx, h.store, h.argon, req)
	if errors.Is(err, service.ErrSetupDone) {
		return redirect(c, "/login")
	}
	var ie *service.InputError
	if errors.As(err, &ie) && ie.Code == service.CodeSetupTokenInvalid {
		h.log.WarnContext(ctx, "setup token refused", "ip", c.IP())
		return fail(http.StatusForbidden, err)
	}
	if _, ok := fieldErrors(err); ok {
		return fail(http.StatusUnprocessableEntity, err)
	}
	if err != nil {
		return err
	}
	h.log.InfoContext(c.UserContext(), "first user signed up", "user_id", user.ID, "team_id", team.ID)
	if err := h.startSession(c, user.ID, team.ID); err != nil {
		return err
	}
	return redirect(c, "/applications")
}
