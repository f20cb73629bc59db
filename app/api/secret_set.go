package api

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
)

// secretSet stores a new version of a secret and, when the body says so,
// its access list, in one transaction.
func (h *handler) secretSet(c *fiber.Ctx) error {
	var req SecretSetRequest
	a, svc, done, err := h.secretRequest(c, &req)
	if done {
		return err
	}
	if req.Value == nil {
		return WriteError(c, http.StatusUnprocessableEntity, "field_required", "value is required: the secret's new value",
			map[string]any{"field": "value"})
	}
	var access *store.SecretAccess
	if req.Environments != nil || req.Previews != nil {
		access = &store.SecretAccess{}
		if req.Environments != nil {
			if access.EnvironmentIDs, err = h.environmentIDs(c, a, *req.Environments); err != nil {
				return h.secretFail(c, err)
			}
		}
		if req.Previews != nil {
			access.Previews = *req.Previews
		}
	}
	ctx, name := c.UserContext(), trimmedName(c)
	var sec store.Secret
	err = h.store.WithTx(ctx, func(tx *store.Store) error {
		s := svc.WithStore(tx)
		var err error
		if sec, err = s.Set(ctx, a.TeamID, a.ID, name, []byte(*req.Value), secretActor(c)); err != nil {
			return err
		}
		if access != nil {
			// What the body leaves out stays as it is.
			if req.Environments == nil {
				access.AllEnvironments, access.EnvironmentIDs = sec.AllEnvironments, sec.EnvironmentIDs
			}
			if req.Previews == nil {
				access.Previews = sec.Previews
			}
			sec, err = s.SetAccess(ctx, a.TeamID, a.ID, name, *access, secretActor(c))
		}
		return err
	})
	return h.respondSecret(c, a, sec, err)
}
