package api

import (
	"github.com/gofiber/fiber/v2"
)

// TeamList is GET /teams.
type TeamList struct {
	Teams []Team `json:"teams"`
}

// Team is a team as the API shows it.
type Team struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Slug string `json:"slug"`
	Role string `json:"role"` // the token creator's role
}

// teamList lists the teams the token can act in: a token belongs to
// exactly one team, so this is that team.
func (h *handler) teamList(c *fiber.Ctx) error {
	ctx := c.UserContext()
	k := callerOf(c)
	team, err := h.store.GetTeam(ctx, k.token.TeamID)
	if err != nil {
		return h.fail(c, err)
	}
	m, err := h.store.GetMember(ctx, team.ID, k.token.CreatedBy)
	if err != nil {
		return h.fail(c, err)
	}
	return c.JSON(TeamList{Teams: []Team{{ID: team.ID, Name: team.Name, Slug: team.Slug, Role: string(m.Role)}}})
}
