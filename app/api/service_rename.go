package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
)

// ServiceRenameRequest is POST /applications/{app}/services/{service}/rename.
type ServiceRenameRequest struct {
	Name string `json:"name"`
}

// serviceRename renames a service, repointing depends_on, jobs, routes and
// exports that name it.
func (h *handler) serviceRename(c *fiber.Ctx) error {
	return h.runEdit(c, func(string) (func(*manifest.Manifest) error, *badBody, error) {
		var req ServiceRenameRequest
		if bad := decode(c.Body(), &req); bad != nil {
			return nil, bad, nil
		}
		return service.RenameService(c.Params("service"), req.Name), nil, nil
	})
}
