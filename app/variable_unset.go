package app

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
)

// variableUnset removes a variable from the scope the form names.
func (h *handler) variableUnset(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "environments")
	if err != nil {
		return err
	}
	scope, name := c.FormValue("scope"), c.FormValue("name")
	edit, err := h.variableEdit(c, a.ID, scope, service.VariableEdit{Name: name})
	return h.editEnvironments(c, a, header, "vars:"+scope, edit, err, "Variable "+name+" removed.")
}
