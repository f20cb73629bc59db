package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
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
	return h.runEdit(c, func(string) (func(*manifest.Manifest) error, *badBody, error) {
		var req ServiceUpdateRequest
		if bad := decode(c.Body(), &req); bad != nil {
			return nil, bad, nil
		}
		return service.EditService(c.Params("service"), service.ServiceEdit(req)), nil, nil
	})
}
