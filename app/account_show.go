package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/views"
	"github.com/slipwayhq/slipway/views/page"
)

func (h *handler) accountShow(c *fiber.Ctx) error {
	return h.render(c, http.StatusOK, "Account", page.Account(accountView(visitorOf(c))))
}

func accountView(v *visitor) page.AccountView {
	av := page.AccountView{Email: v.user.Email}
	for _, t := range v.teams {
		av.Teams = append(av.Teams, views.TeamRef{ID: t.Team.ID, Name: t.Team.Name, Role: string(t.Role)})
	}
	return av
}
