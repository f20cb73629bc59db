package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
)

// ServiceUpdateRequest is PATCH /applications/{app}/services/{service}:
// absent fields stay; in environment, null removes a key.
type ServiceUpdateRequest struct {
	Replicas    *int64             `json:"replicas,omitempty"`
	Image       *string            `json:"image,omitempty"`
	Environment map[string]*string `json:"environment,omitempty"`
}

// serviceUpdate changes a service's replicas, image or environment.
func (h *handler) serviceUpdate(c *fiber.Ctx) error {
	var req ServiceUpdateRequest
	if bad := decode(c.Body(), &req); bad != nil {
		return bad.write(c)
	}
	return h.runEdit(c, service.EditService(c.Params("service"), service.ServiceEdit(req)), nil)
}
