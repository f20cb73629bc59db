package app

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
)

func (h *handler) invitationRevoke(c *fiber.Ctx) error {
	ctx := c.UserContext()
	v := visitorOf(c)
	id := c.Params("invitation")
	err := h.store.WithTx(ctx, func(tx *store.Store) error {
		if err := tx.DeleteInvitation(ctx, v.current.Team.ID, id); err != nil {
			return err
		}
		_, err := tx.RecordEvent(ctx, v.current.Team.ID, store.EventParams{Actor: v.actor().String(), Verb: "invitation.revoke", ObjectType: "invitation", ObjectID: id})
		return err
	})
	if err != nil {
		return err
	}
	return redirect(c, "/members?notice=Invitation+revoked.")
}
