package app

import (
	"net/url"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/views/page"
)

// registryCredentialSet stores the form's account. The password is never
// put back into the page, even when the form is refused.
func (h *handler) registryCredentialSet(c *fiber.Ctx) error {
	if err := h.requireSecrets(c); err != nil {
		return err
	}
	v := page.RegistryCredentialsView{Host: c.FormValue("host"), Username: c.FormValue("username")}
	rc, err := h.secrets.SetRegistryCredential(c.UserContext(), visitorOf(c).current.Team.ID, v.Host, v.Username, []byte(c.FormValue("password")), secretActor(c))
	if err != nil {
		return h.registryCredentialRefused(c, v, err)
	}
	return redirect(c, "/registry-credentials?notice="+url.QueryEscape("Saved the credentials for "+rc.Host+"."))
}
