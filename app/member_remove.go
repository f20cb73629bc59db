package app

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
)

// memberRemove removes a member; the user's sessions survive, but their
// current team falls back to another they belong to.
func (h *handler) memberRemove(c *fiber.Ctx) error {
	return h.changeMember(c, "member.remove", func(tx *store.Store, teamID string, m store.Member) (map[string]any, error) {
		if err := tx.RemoveMember(c.UserContext(), teamID, m.UserID); err != nil {
			return nil, err
		}
		return map[string]any{"email": m.Email, "role": m.Role}, nil
	})
}
