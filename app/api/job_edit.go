package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
)

// jobSet adds or replaces the job named in the path.
func (h *handler) jobSet(c *fiber.Ctx) error {
	return h.runEdit(c, func(string) (func(*manifest.Manifest) error, *badBody, error) {
		var j manifest.Job
		if bad := decodeNamed(c.Body(), &j, &j.Name, c.Params("job")); bad != nil {
			return nil, bad, nil
		}
		return service.SetJob(j), nil, nil
	})
}

// jobRemove removes the job named in the path.
func (h *handler) jobRemove(c *fiber.Ctx) error {
	return h.runEdit(c, func(string) (func(*manifest.Manifest) error, *badBody, error) {
		return service.RemoveJob(c.Params("job")), nil, nil
	})
}
