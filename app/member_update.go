package app

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// memberUpdate changes a member's role. Only owners can touch owners or
// make new ones (see auth.Role.CanAssign).
func (h *handler) memberUpdate(c *fiber.Ctx) error {
	return h.changeMember(c, "member.role_change", func(tx *store.Store, teamID string, m store.Member) (map[string]any, error) {
		role, err := auth.ParseRole(c.FormValue("role"))
		if err != nil {
			return nil, &formError{field: "", msg: "role: " + err.Error()}
		}
		if !visitorOf(c).role().CanAssign(role) {
			return nil, &formError{field: "", msg: fmt.Sprintf("role: your role cannot give the %s role", role)}
		}
		if err := tx.UpdateMemberRole(c.UserContext(), teamID, m.UserID, store.Role(role)); err != nil {
			return nil, err
		}
		return map[string]any{"email": m.Email, "from": m.Role, "to": role}, nil
	})
}

// formError is a refusal shown on the members page rather than an error page.
type formError struct{ field, msg string }

func (e *formError) Error() string { return e.msg }

// changeMember loads the target member (404 when not in this team), checks
// the actor may manage them, applies change and records the event, in one
// transaction.
func (h *handler) changeMember(c *fiber.Ctx, verb string, change func(tx *store.Store, teamID string, m store.Member) (map[string]any, error)) error {
	ctx := c.UserContext()
	v := visitorOf(c)
	teamID := v.current.Team.ID
	err := h.store.WithTx(ctx, func(tx *store.Store) error {
		m, err := tx.GetMember(ctx, teamID, c.Params("user"))
		if err != nil {
			return err
		}
		if !v.role().CanManage(auth.Role(m.Role)) {
			return &formError{msg: fmt.Sprintf("your role (%s) cannot change an %s", v.role(), m.Role)}
		}
		details, err := change(tx, teamID, m)
		if err != nil {
			return err
		}
		_, err = tx.RecordEvent(ctx, teamID, store.EventParams{Actor: v.actor().String(), Verb: verb, ObjectType: "member", ObjectID: m.UserID, Details: details})
		return err
	})
	var fe *formError
	switch {
	case errors.Is(err, store.ErrLastOwner):
		fe = &formError{msg: "A team needs at least one owner: make someone else owner first."}
	case errors.As(err, &fe):
	case err != nil:
		return err
	default:
		return redirect(c, "/members?notice=Saved.")
	}
	mv, err := h.membersView(c)
	if err != nil {
		return err
	}
	mv.Errors = map[string]string{fe.field: fe.msg}
	return h.render(c, http.StatusUnprocessableEntity, "Members", page.Members(mv))
}
