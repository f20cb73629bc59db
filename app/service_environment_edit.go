package app

import (
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/savedmanifest"
)

// serviceEnvironmentEdit replaces a service's [spec.services.environment]
// with a pasted .env text; a bad line refuses the whole text with an error
// at each line, shown under the text as it was pasted.
func (h *handler) serviceEnvironmentEdit(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "environments")
	if err != nil {
		return err
	}
	name, text := c.Params("service"), c.FormValue("dotenv")
	m, _, err := savedmanifest.Current(c.UserContext(), h.store, a.TeamID, a.ID)
	if err != nil {
		return err
	}
	field := "spec.services.environment"
	if m != nil {
		for i, s := range m.Spec.Services {
			if s.Name == name {
				field = fmt.Sprintf("spec.services[%d].environment", i)
			}
		}
	}
	env, errs := service.ParseDotenv(text, field)
	var buildErr error
	if len(errs) > 0 {
		buildErr = &service.ManifestError{Errors: errs}
	}
	return h.editManifestTab(c, a, "environments", service.ReplaceServiceEnvironment(name, env), buildErr,
		"Environment of "+name+" saved ("+plural(len(env), "variable", "variables")+").",
		func(errMsg, notice string, revision int64) error {
			t, err := h.environmentsTab(c, a, nil, notice)
			if err != nil {
				return err
			}
			if errMsg != "" {
				for i := range t.Services {
					if t.Services[i].Service == name {
						t.Services[i].Text = text
						t.Services[i].Errors = strings.Split(errMsg, "; ")
					}
				}
			}
			return h.showEnvironmentsTab(c, a, header, t, errMsg != "", revision)
		})
}
