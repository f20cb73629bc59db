package app

import (
	"net/url"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/views/page"
)

func (h *handler) registryCredentialDelete(c *fiber.Ctx) error {
	if err := h.requireSecrets(c); err != nil {
		return err
	}
	host := c.Params("host")
	if err := h.secrets.DeleteRegistryCredential(c.UserContext(), visitorOf(c).current.Team.ID, host); err != nil {
		return h.registryCredentialRefused(c, page.RegistryCredentialsView{}, err)
	}
	return redirect(c, "/registry-credentials?notice="+url.QueryEscape("Deleted the credentials for "+host+"."))
}
