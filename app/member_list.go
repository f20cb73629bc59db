package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/views/component"
	"github.com/slipwayhq/slipway/views/page"
)

func (h *handler) memberList(c *fiber.Ctx) error {
	mv, err := h.membersView(c)
	if err != nil {
		return err
	}
	mv.Notice = c.Query("notice")
	return h.render(c, http.StatusOK, "Members", page.Members(mv))
}

// membersView loads the page's data; handlers that fail a form fill in the
// form values and errors and render it again.
func (h *handler) membersView(c *fiber.Ctx) (page.MembersView, error) {
	ctx := c.UserContext()
	v := visitorOf(c)
	teamID := v.current.Team.ID
	members, err := h.store.ListMembers(ctx, teamID)
	if err != nil {
		return page.MembersView{}, err
	}
	mv := page.MembersView{InviteRole: string(auth.RoleDeveloper)}
	for _, r := range auth.Roles {
		mv.RoleHelp = append(mv.RoleHelp, component.Meaning{Term: string(r), Text: r.Meaning()})
	}
	for _, m := range members {
		mv.Members = append(mv.Members, page.MemberRow{
			UserID: m.UserID, Email: m.Email, Role: string(m.Role), You: m.UserID == v.user.ID,
			CanManage: v.role().CanManage(auth.Role(m.Role)),
		})
	}
	for _, r := range auth.Roles {
		if v.role().CanAssign(r) {
			mv.Assignable = append(mv.Assignable, string(r))
		}
	}
	if v.role().Has(auth.MembersManage) {
		invs, err := h.store.ListPendingInvitations(ctx, teamID)
		if err != nil {
			return page.MembersView{}, err
		}
		for _, i := range invs {
			mv.Invitations = append(mv.Invitations, page.InvitationRow{ID: i.ID, Email: i.Email, Role: string(i.Role), Expires: when(&i.ExpiresAt)})
		}
	}
	return mv, nil
}
