package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
)

// secretAccess replaces a secret's access list from the tab's form:
// "every environment", the checked environments, and previews.
func (h *handler) secretAccess(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "secrets")
	if err != nil {
		return err
	}
	if err := h.requireSecrets(c); err != nil {
		return err
	}
	access := store.SecretAccess{AllEnvironments: c.FormValue("all_environments") == "true", Previews: c.FormValue("previews") == "true"}
	for _, id := range c.Request().PostArgs().PeekMulti("environment") {
		access.EnvironmentIDs = append(access.EnvironmentIDs, string(id))
	}
	name := c.Params("name")
	sec, err := h.secrets.SetAccess(c.UserContext(), a.TeamID, a.ID, name, access, secretActor(c))
	if err != nil {
		return h.secretRefused(c, a, header, name, err)
	}
	return h.renderSecrets(c, a, header, http.StatusOK, nil, "Updated who may mount "+sec.Name+".")
}
