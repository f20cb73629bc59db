package app

import (
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/views/page"
)

// setupCreate creates the first owner and team, then signs them in.
func (h *handler) setupCreate(c *fiber.Ctx) error {
	form := page.SignupForm{Email: c.FormValue("email"), TeamName: c.FormValue("team")}
	user, team, err := service.Signup(c.UserContext(), h.store, h.argon, service.SignupRequest{
		Email: form.Email, Password: c.FormValue("password"), TeamName: form.TeamName, FirstRun: true,
	})
	if errors.Is(err, service.ErrSetupDone) {
		return redirect(c, "/login")
	}
	if errs, ok := fieldErrors(err); ok {
		form.Errors = errs
		return h.render(c, http.StatusUnprocessableEntity, "First run", page.FirstRun(form))
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
