package app

import (
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
)

// variableSet sets a variable in the scope the form names: the defaults
// (""), one environment ("env:<name>") or every preview ("previews").
func (h *handler) variableSet(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "environments")
	if err != nil {
		return err
	}
	scope, name := c.FormValue("scope"), strings.TrimSpace(c.FormValue("name"))
	value, err := parseVariableValue(c.FormValue("type"), c.FormValue("value"))
	if err == nil && name == "" {
		err = &service.InputError{Field: "name", Code: "required", Message: "give the variable a name"}
	}
	var edit func(*manifest.Manifest) error
	if err == nil {
		edit, err = h.variableEdit(c, a.ID, scope, service.VariableEdit{Name: name, Value: &value})
	}
	return h.editEnvironments(c, a, header, "vars:"+scope, edit, err, "Variable "+name+" set.")
}

// variableEdit returns the edit of v in scope.
func (h *handler) variableEdit(c *fiber.Ctx, appID, scope string, v service.VariableEdit) (func(*manifest.Manifest) error, error) {
	switch {
	case scope == "previews":
		return service.EditPreviewVariable(v), nil
	case strings.HasPrefix(scope, "env:"):
		v.Environment = strings.TrimPrefix(scope, "env:")
	case scope != "":
		return nil, &service.InputError{Field: "scope", Code: "scope_unknown", Message: "choose the defaults, an environment or the previews"}
	}
	return service.EditVariable(c.UserContext(), h.store, visitorOf(c).actor(), appID, v)
}

// parseVariableValue reads the value as the type the form chose.
func parseVariableValue(typ, raw string) (manifest.Value, error) {
	switch typ {
	case "integer":
		n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
		if err != nil {
			return manifest.Value{}, &service.InputError{Field: "value", Code: "not_an_integer", Message: "type a whole number such as 3, or choose the text type"}
		}
		return manifest.IntValue(n), nil
	case "boolean":
		b, err := strconv.ParseBool(strings.TrimSpace(raw))
		if err != nil {
			return manifest.Value{}, &service.InputError{Field: "value", Code: "not_a_boolean", Message: "type true or false, or choose the text type"}
		}
		return manifest.BoolValue(b), nil
	case "", "string":
		return manifest.StringValue(raw), nil
	}
	return manifest.Value{}, &service.InputError{Field: "type", Code: "type_unknown", Message: "choose text, integer or true / false"}
}
