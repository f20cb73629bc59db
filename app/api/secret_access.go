package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
)

// secretAccess replaces a secret's access list. Running deployments keep
// the versions they pinned: narrowing access affects only later captures.
func (h *handler) secretAccess(c *fiber.Ctx) error {
	var req SecretAccessRequest
	a, svc, done, err := h.secretRequest(c, &req)
	if done {
		return err
	}
	access := store.SecretAccess{AllEnvironments: len(req.Environments) == 0}
	if req.AllEnvironments != nil {
		access.AllEnvironments = *req.AllEnvironments
	}
	if !access.AllEnvironments {
		if access.EnvironmentIDs, err = h.environmentIDs(c, a, req.Environments); err != nil {
			return h.secretFail(c, err)
		}
	}
	if req.Previews != nil {
		access.Previews = *req.Previews
	} else {
		// An absent previews keeps what the secret has.
		cur, err := svc.Get(c.UserContext(), a.TeamID, a.ID, trimmedName(c))
		if err != nil {
			return h.secretFail(c, err)
		}
		access.Previews = cur.Previews
	}
	sec, err := svc.SetAccess(c.UserContext(), a.TeamID, a.ID, trimmedName(c), access, secretActor(c))
	return h.respondSecret(c, a, sec, err)
}
