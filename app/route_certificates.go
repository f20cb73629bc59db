package app

import (
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// addCertificates labels every route with its certificate state as the
// gateway last reported it ("issued, expires 2027-03-01", "failed", …), and
// links it over https once its certificate is one browsers trust (the
// gateway then redirects http there), over plain http until then. A
// store error leaves the labels out: the rest of the overview still stands.
func (h *handler) addCertificates(c *fiber.Ctx, teamID string, envs []page.EnvironmentView) {
	for i := range envs {
		e := &envs[i]
		if len(e.Routes) == 0 {
			continue
		}
		certs, err := teamRead(h, c, teamID, readKey("certificates", e.ID), func() (map[string]store.RouteCertificate, error) {
			return h.store.ListEnvironmentCertificates(c.UserContext(), teamID, e.ID)
		})
		if err != nil {
			h.log.WarnContext(c.UserContext(), "certificate states unavailable", "environment", e.ID, "err", err)
			continue
		}
		for j := range e.Routes {
			r := &e.Routes[j]
			cert, ok := certs[r.Hostname]
			if !ok {
				continue
			}
			label := cert.State
			switch cert.State {
			case "operator":
				label = "operator certificate"
			case "internal":
				label = "internal CA"
			}
			if cert.ExpiresAt != nil {
				label += ", expires " + cert.ExpiresAt.UTC().Format(time.DateOnly)
			}
			r.Certificate, r.CertificateError = label, cert.LastError
			if cert.State == "issued" || cert.State == "operator" {
				r.URL = strings.Replace(r.URL, "http://", "https://", 1)
			}
		}
	}
}
