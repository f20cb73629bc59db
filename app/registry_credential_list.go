package app

import (
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/views/page"
)

// registryCredentialList shows the team's registry accounts.
func (h *handler) registryCredentialList(c *fiber.Ctx) error {
	if err := h.requireSecrets(c); err != nil {
		return err
	}
	return h.renderRegistryCredentials(c, http.StatusOK, page.RegistryCredentialsView{Notice: c.Query("notice")})
}

// renderRegistryCredentials renders the page with v's form state and the
// team's accounts.
func (h *handler) renderRegistryCredentials(c *fiber.Ctx, status int, v page.RegistryCredentialsView) error {
	list, err := h.secrets.RegistryCredentials(c.UserContext(), visitorOf(c).current.Team.ID)
	if err != nil {
		return err
	}
	for _, rc := range list {
		v.Credentials = append(v.Credentials, page.RegistryCredentialRow{Host: rc.Host, Username: rc.Username, Updated: when(&rc.UpdatedAt)})
	}
	return h.render(c, status, "Registry credentials", page.RegistryCredentials(v))
}

// registryCredentialRefused re-renders the form with a refusal under its
// field; anything but a refusal is returned.
func (h *handler) registryCredentialRefused(c *fiber.Ctx, v page.RegistryCredentialsView, err error) error {
	var se *secrets.Error
	if !errors.As(err, &se) {
		return err
	}
	v.Errors = map[string]string{se.Field: se.Message + " (" + se.Code + ")"}
	return h.renderRegistryCredentials(c, http.StatusUnprocessableEntity, v)
}
