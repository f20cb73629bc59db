package app

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
)

// environmentSettingUpdate sets an environment's visibility and rollback
// policy ("" restores the default) in one manifest revision.
func (h *handler) environmentSettingUpdate(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "environments")
	if err != nil {
		return err
	}
	env := c.Params("environment")
	ctx, actor := c.UserContext(), visitorOf(c).actor()
	visibility, err := service.EditEnvironmentSetting(ctx, h.store, actor, a.ID, env, service.SettingVisibility, c.FormValue("visibility"))
	var rollback func(*manifest.Manifest) error
	if err == nil {
		rollback, err = service.EditEnvironmentSetting(ctx, h.store, actor, a.ID, env, service.SettingRollback, c.FormValue("rollback"))
	}
	edit := func(m *manifest.Manifest) error {
		if err := visibility(m); err != nil {
			return err
		}
		return rollback(m)
	}
	return h.editEnvironments(c, a, header, "settings:"+env, edit, err, "Settings of "+env+" saved.")
}
