package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/views/page"
)

// teamCreate creates a team owned by the user and switches to it.
func (h *handler) teamCreate(c *fiber.Ctx) error {
	v := visitorOf(c)
	team, err := service.CreateTeam(c.UserContext(), h.store, v.user.ID, c.FormValue("team"))
	if errs, ok := fieldErrors(err); ok {
		av := accountView(v)
		av.TeamName, av.Errors = c.FormValue("team"), errs
		return h.render(c, http.StatusUnprocessableEntity, "Account", page.Account(av))
	}
	if err != nil {
		return err
	}
	if err := h.store.SetSessionTeam(c.UserContext(), v.session.ID, team.ID); err != nil {
		return err
	}
	return redirect(c, "/applications")
}
