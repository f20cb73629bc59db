package api

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
)

// previewCreate creates the preview of a branch and slot and requests its
// first deployment; 201 when created, 200 with the existing preview (not
// redeployed) when it was there already.
func (h *handler) previewCreate(c *fiber.Ctx, pv *service.Previews, a store.Application) error {
	var req PreviewCreateRequest
	if bad := decode(c.Body(), &req); bad != nil {
		return bad.write(c)
	}
	deploy := req.Deploy == nil || *req.Deploy
	p, err := pv.Create(c.UserContext(), callerOf(c).actor(), h.enqueue, a.ID,
		service.PreviewRequest{Branch: req.Branch, Slot: req.Slot, Deploy: deploy})
	if err != nil {
		return h.failPreview(c, err)
	}
	status := http.StatusOK
	if p.Created {
		status = http.StatusCreated
	}
	return c.Status(status).JSON(PreviewCreated{Preview: newPreview(p), Created: p.Created})
}
