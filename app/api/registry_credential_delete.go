package api

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
)

func (h *handler) registryCredentialDelete(c *fiber.Ctx) error {
	svc, err := h.secretService(c)
	if svc == nil {
		return err
	}
	if err := svc.DeleteRegistryCredential(c.UserContext(), callerOf(c).token.TeamID, registryHost(c)); err != nil {
		return h.registryCredentialFail(c, err)
	}
	return c.SendStatus(http.StatusNoContent)
}
