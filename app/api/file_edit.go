package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
)

// fileSet adds a read-only file to a service, or replaces the one at the
// same target.
func (h *handler) fileSet(c *fiber.Ctx) error {
	return h.runEdit(c, func(string) (func(*manifest.Manifest) error, *badBody, error) {
		var f manifest.File
		if bad := decode(c.Body(), &f); bad != nil {
			return nil, bad, nil
		}
		return service.SetFile(c.Params("service"), f), nil, nil
	})
}

// fileRemove removes the file a service mounts at ?target=.
func (h *handler) fileRemove(c *fiber.Ctx) error {
	return h.runEdit(c, func(string) (func(*manifest.Manifest) error, *badBody, error) {
		target := c.Query("target")
		if target == "" {
			return nil, &badBody{"target_missing", "name the file to remove with ?target=/its/path", map[string]any{"field": "target"}}, nil
		}
		return service.RemoveFile(c.Params("service"), target), nil, nil
	})
}
