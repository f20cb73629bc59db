package app

import (
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// invitationShow shows whom an invitation link is from, before accepting.
func (h *handler) invitationShow(c *fiber.Ctx) error {
	inv, team, err := h.liveInvitation(c)
	if err != nil {
		return err
	}
	v := visitorOf(c)
	return h.render(c, http.StatusOK, "Invitation", page.Invitation(page.InvitationView{
		Secret: c.Params("secret"), TeamName: team.Name, Role: string(inv.Role), Email: inv.Email, SignedIn: v.user.Email,
	}))
}

// liveInvitation finds the invitation of the :secret link and refuses a
// used or expired one with a page saying so.
func (h *handler) liveInvitation(c *fiber.Ctx) (store.Invitation, store.Team, error) {
	ctx := c.UserContext()
	inv, err := h.store.GetInvitationByToken(ctx, store.HashToken(c.Params("secret")))
	if errors.Is(err, store.ErrNotFound) {
		return inv, store.Team{}, fiber.NewError(http.StatusNotFound, "This invitation link is not valid.")
	}
	if err != nil {
		return inv, store.Team{}, err
	}
	if err := invitationError(h.now().Before(inv.ExpiresAt), inv.AcceptedAt != nil); err != nil {
		return inv, store.Team{}, err
	}
	team, err := h.store.GetTeam(ctx, inv.TeamID)
	return inv, team, err
}

func invitationError(live, used bool) error {
	switch {
	case used:
		return &fiber.Error{Code: http.StatusGone, Message: "This invitation has already been used. Ask a team admin for a new one."}
	case !live:
		return &fiber.Error{Code: http.StatusGone, Message: "This invitation has expired. Ask a team admin for a new one."}
	}
	return nil
}
