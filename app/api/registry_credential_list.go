package api

import "github.com/gofiber/fiber/v2"

func (h *handler) registryCredentialList(c *fiber.Ctx) error {
	svc, err := h.secretService(c)
	if svc == nil {
		return err
	}
	list, err := svc.RegistryCredentials(c.UserContext(), callerOf(c).token.TeamID)
	if err != nil {
		return h.fail(c, err)
	}
	out := RegistryCredentialList{RegistryCredentials: make([]RegistryCredential, 0, len(list))}
	for _, rc := range list {
		out.RegistryCredentials = append(out.RegistryCredentials, newRegistryCredential(rc))
	}
	return c.JSON(out)
}
