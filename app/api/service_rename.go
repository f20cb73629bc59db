package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
)

// ServiceRenameRequest is POST /applications/{app}/services/{service}/rename.
type ServiceRenameRequest struct {
	Name string `json:"name"`
}

// serviceRename renames a service, repointing depends_on, jobs, routes and
// exports that name it.
func (h *handler) serviceRename(c *fiber.Ctx) error {
	var req ServiceRenameRequest
	if bad := decode(c.Body(), &req); bad != nil {
		return bad.write(c)
	}
	return h.runEdit(c, service.RenameService(c.Params("service"), req.Name), nil)
}
