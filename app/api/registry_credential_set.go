package api

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
)

// registryCredentialSet stores (or replaces) the team's account on a
// registry; the answer never holds the password.
func (h *handler) registryCredentialSet(c *fiber.Ctx) error {
	svc, err := h.secretService(c)
	if svc == nil {
		return err
	}
	var req RegistryCredentialSetRequest
	if bad := decode(c.Body(), &req); bad != nil {
		return bad.write(c)
	}
	if req.Password == nil {
		return WriteError(c, http.StatusUnprocessableEntity, "field_required", "password is required: the registry password or access token",
			map[string]any{"field": "password"})
	}
	rc, err := svc.SetRegistryCredential(c.UserContext(), callerOf(c).token.TeamID, registryHost(c), req.Username, []byte(*req.Password), secretActor(c))
	if err != nil {
		return h.registryCredentialFail(c, err)
	}
	return c.JSON(newRegistryCredential(rc))
}
