package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/views/partial"
)

// manifestValidate answers the editor's validate-as-you-type request with
// every error at its line and field path (and the gutter marks, out of band).
func (h *handler) manifestValidate(c *fiber.Ctx) error {
	f, err := readManifestForm(c)
	if err != nil {
		return err
	}
	var errs []partial.ManifestErrorView
	if f.source != "" {
		_, _, err := service.DecodeManifest([]byte(f.source), f.format)
		var ok bool
		if errs, ok = manifestErrorViews(err); !ok && err != nil {
			return err
		}
	}
	return h.render(c, http.StatusOK, "Manifest", partial.ManifestValidation(f.source, errs))
}
