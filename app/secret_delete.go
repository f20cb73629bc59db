package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
)

// secretDelete deletes a stored secret (the form asks for confirmation).
func (h *handler) secretDelete(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "secrets")
	if err != nil {
		return err
	}
	if err := h.requireSecrets(c); err != nil {
		return err
	}
	name := c.Params("name")
	if err := h.secrets.Delete(c.UserContext(), a.TeamID, a.ID, name, secretActor(c)); err != nil {
		return h.secretRefused(c, a, header, name, err)
	}
	return h.renderSecrets(c, a, header, http.StatusOK, nil, "Deleted "+name+".")
}
