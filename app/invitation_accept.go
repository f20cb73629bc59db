package app

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// invitationAccept adds the signed-in user to the team, or creates the
// account and the membership together (nothing is half-created).
func (h *handler) invitationAccept(c *fiber.Ctx) error {
	ctx := c.UserContext()
	inv, team, err := h.liveInvitation(c)
	if err != nil {
		return err
	}
	v := visitorOf(c)
	hash := store.HashToken(c.Params("secret"))
	if v.signedIn() {
		_, err := h.store.AcceptInvitation(ctx, hash, v.user.ID, h.now())
		if err := h.acceptError(err); err != nil {
			return err
		}
		if err := h.store.SetSessionTeam(ctx, v.session.ID, inv.TeamID); err != nil {
			return err
		}
		return redirect(c, "/applications")
	}

	form := page.InvitationView{Secret: c.Params("secret"), TeamName: team.Name, Role: string(inv.Role), Email: c.FormValue("email")}
	var user store.User
	err = func() error {
		email, err := service.CheckEmail(form.Email)
		if err != nil {
			return err
		}
		if !strings.EqualFold(email, inv.Email) {
			return &service.InputError{Field: "email", Code: "invitation_email_mismatch",
				Message: "this invitation was sent to another e-mail address: sign up with the address it was sent to"}
		}
		pwHash, err := service.HashNewPassword(h.argon, c.FormValue("password"))
		if err != nil {
			return err
		}
		return h.store.WithTx(ctx, func(tx *store.Store) error {
			if user, err = tx.CreateUser(ctx, email, "", pwHash); err != nil {
				var ce *store.ConflictError
				if errors.As(err, &ce) {
					return &service.InputError{Field: "email", Code: ce.Code, Message: "an account with this e-mail address exists: log in first, then open the link again"}
				}
				return err
			}
			_, err = tx.AcceptInvitation(ctx, hash, user.ID, h.now())
			return err
		})
	}()
	if errs, ok := fieldErrors(err); ok {
		form.Errors = errs
		return h.render(c, http.StatusUnprocessableEntity, "Invitation", page.Invitation(form))
	}
	if err := h.acceptError(err); err != nil {
		return err
	}
	if err := h.startSession(c, user.ID, inv.TeamID); err != nil {
		return err
	}
	return redirect(c, "/applications")
}

// acceptError turns the store's refusals into the page a visitor sees; a
// race with another accept lands here rather than in liveInvitation.
func (h *handler) acceptError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrInvitationUsed):
		return invitationError(true, true)
	case errors.Is(err, store.ErrInvitationExpired):
		return invitationError(false, false)
	case errors.Is(err, store.ErrInvitationEmailMismatch):
		return fiber.NewError(http.StatusForbidden, "This invitation was sent to another e-mail address. Log out and open the link again to join with the invited address.")
	case errors.Is(err, store.ErrConflict):
		return fiber.NewError(http.StatusConflict, "You are already a member of this team.")
	}
	return err
}
