package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
)

// secretList is the Secrets tab.
func (h *handler) secretList(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "secrets")
	if err != nil {
		return err
	}
	return h.renderSecrets(c, a, header, http.StatusOK, nil, "")
}
