package app

import (
	"fmt"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// invitationTTL is how long an invitation link works.
const invitationTTL = 7 * 24 * time.Hour

// invitationCreate makes a single-use link and shows it once.
func (h *handler) invitationCreate(c *fiber.Ctx) error {
	ctx := c.UserContext()
	v := visitorOf(c)
	mv, err := h.membersView(c)
	if err != nil {
		return err
	}
	mv.InviteEmail, mv.InviteRole = c.FormValue("email"), c.FormValue("role")
	email, err := service.CheckEmail(mv.InviteEmail)
	if errs, ok := fieldErrors(err); ok {
		mv.Errors = errs
		return h.render(c, http.StatusUnprocessableEntity, "Members", page.Members(mv))
	}
	role, err := auth.ParseRole(mv.InviteRole)
	if err == nil && !v.role().CanAssign(role) {
		err = fmt.Errorf("your role cannot give the %s role", role)
	}
	if err != nil {
		mv.Errors = map[string]string{"role": err.Error()}
		return h.render(c, http.StatusUnprocessableEntity, "Members", page.Members(mv))
	}
	secret := auth.NewSecret(auth.InvitationPrefix)
	err = h.store.WithTx(ctx, func(tx *store.Store) error {
		inv, err := tx.CreateInvitation(ctx, v.current.Team.ID, store.InvitationParams{
			Email: email, Role: store.Role(role), TokenHash: store.HashToken(secret), InvitedBy: v.user.ID,
			ExpiresAt: h.now().Add(invitationTTL),
		})
		if err != nil {
			return err
		}
		_, err = tx.RecordEvent(ctx, v.current.Team.ID, store.EventParams{Actor: v.actor().String(), Verb: "invitation.create", ObjectType: "invitation", ObjectID: inv.ID, Details: map[string]any{"email": email, "role": role}})
		return err
	})
	if err != nil {
		return err
	}
	// The link is shown in this response only, so it is rendered rather
	// than redirected to (post-redirect-get would lose it).
	if mv, err = h.membersView(c); err != nil {
		return err
	}
	mv.InviteLink, mv.InviteEmail = c.BaseURL()+"/invitations/"+secret, email
	return h.render(c, http.StatusCreated, "Members", page.Members(mv))
}
