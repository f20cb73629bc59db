package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
)

// generatedSecretRegenerate asks the environment's next deployment for a
// new value of a generated secret.
func (h *handler) generatedSecretRegenerate(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "secrets")
	if err != nil {
		return err
	}
	env, err := h.store.GetEnvironment(c.UserContext(), a.TeamID, c.Params("environment"))
	if err != nil {
		return err
	}
	if env.ApplicationID != a.ID {
		return fiber.ErrNotFound
	}
	if err := h.requireSecrets(c); err != nil {
		return err
	}
	name := c.Params("name")
	if _, err := h.secrets.Regenerate(c.UserContext(), a.TeamID, env.ID, name); err != nil {
		return h.secretRefused(c, a, header, "gen:"+env.ID+":"+name, err)
	}
	return h.renderSecrets(c, a, header, http.StatusOK, nil, "The next deployment of "+env.Name+" generates a new "+name+".")
}
