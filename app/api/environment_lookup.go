package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
)

// targetOf resolves the environment or preview an endpoint acts on, within
// the caller's application a.
type targetOf func(c *fiber.Ctx, a store.Application) (store.Environment, error)

// namedEnvironment is the environment :env names. Previews are not
// environments: a preview's slug is environment_not_found, as the spec
// has environment commands never act on previews.
func (h *handler) namedEnvironment(c *fiber.Ctx, a store.Application) (store.Environment, error) {
	return service.EnvironmentByName(c.UserContext(), h.store, a.TeamID, a.ID, c.Params("env"))
}

// namedPreview is the preview :slug names (previews endpoints).
func (h *handler) namedPreview(c *fiber.Ctx, a store.Application) (store.Environment, error) {
	return h.store.GetPreviewBySlug(c.UserContext(), a.TeamID, a.ID, c.Params("slug"))
}

// environmentName is the name of the environment :env names, by name or
// id, for operations that take a name; an unknown one is left as it is,
// for the operation to refuse in its own words.
func (h *handler) environmentName(c *fiber.Ctx, appID string) string {
	env, err := service.EnvironmentByName(c.UserContext(), h.store, callerOf(c).token.TeamID, appID, c.Params("env"))
	if err != nil {
		return c.Params("env")
	}
	return env.Name
}
