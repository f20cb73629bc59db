package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
)

// variableUnset removes a variable's default, or with ?env= its value in
// one environment.
func (h *handler) variableUnset(c *fiber.Ctx) error {
	return h.runEdit(c, func(appID string) (func(*manifest.Manifest) error, *badBody, error) {
		edit, err := service.EditVariable(c.UserContext(), h.store, callerOf(c).actor(), appID,
			service.VariableEdit{Name: c.Params("variable"), Environment: c.Query("env")})
		return edit, nil, err
	})
}
