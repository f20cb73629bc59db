package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
)

// VariableSetRequest is PUT /applications/{app}/variables/{variable}.
type VariableSetRequest struct {
	// Value is a string, an integer or a boolean.
	Value manifest.Value `json:"value"`
}

// variableSet sets a variable's default, or with ?env= its value in one
// environment.
func (h *handler) variableSet(c *fiber.Ctx) error {
	return h.runEdit(c, func(appID string) (func(*manifest.Manifest) error, *badBody, error) {
		var req VariableSetRequest
		if bad := decode(c.Body(), &req); bad != nil {
			return nil, bad, nil
		}
		edit, err := service.EditVariable(c.UserContext(), h.store, callerOf(c).actor(), appID,
			service.VariableEdit{Name: c.Params("variable"), Environment: c.Query("env"), Value: &req.Value})
		return edit, nil, err
	})
}
