package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
)

// User is the person a token acts for.
type User struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
}

// Me is GET /me: who a token acts for, where, and what it may do.
type Me struct {
	User   User     `json:"user"`
	Team   Team     `json:"team"`
	Token  Token    `json:"token"`
	Scopes []string `json:"scopes"` // what the token may do now
	// InstallationAdmin says the user sees the installation's nodes.
	InstallationAdmin bool `json:"installation_admin"`
}

// meShow says who the token acts for, in which team, with which scopes.
func (h *handler) meShow(c *fiber.Ctx) error {
	ctx := c.UserContext()
	k := callerOf(c)
	user, err := h.store.GetUser(ctx, k.token.CreatedBy)
	if err != nil {
		return h.fail(c, err)
	}
	team, err := h.store.GetTeam(ctx, k.token.TeamID)
	if err != nil {
		return h.fail(c, err)
	}
	m, err := h.store.GetMember(ctx, team.ID, user.ID)
	if err != nil {
		return h.fail(c, err)
	}
	return c.JSON(Me{
		User:   User{ID: user.ID, Email: user.Email, Name: user.Name},
		Team:   Team{ID: team.ID, Name: team.Name, Slug: team.Slug, Role: string(m.Role)},
		Token:  newToken(k.token),
		Scopes: auth.Strings(k.scopes),

		InstallationAdmin: user.InstallationAdmin,
	})
}
