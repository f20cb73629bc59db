package app

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// secretSet stores a new version of the named secret from the Secrets
// tab's form. The value is never put back into the page, even when the
// form is refused.
func (h *handler) secretSet(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "secrets")
	if err != nil {
		return err
	}
	if err := h.requireSecrets(c); err != nil {
		return err
	}
	name := strings.TrimSpace(c.FormValue("name"))
	sec, err := h.secrets.Set(c.UserContext(), a.TeamID, a.ID, name, []byte(c.FormValue("value")), secretActor(c))
	if err != nil {
		return h.secretRefused(c, a, header, "", err)
	}
	return h.renderSecrets(c, a, header, http.StatusOK, nil, "Saved "+sec.Name+" as version "+strconv.Itoa(sec.CurrentVersion)+".")
}
