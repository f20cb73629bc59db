package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
)

// ApplicationRenameRequest is POST /applications/{app}/rename.
type ApplicationRenameRequest struct {
	Name string `json:"name"`
}

// ApplicationRenamed answers a rename.
type ApplicationRenamed struct {
	Application Application `json:"application"`
	OldName     string      `json:"old_name"`
	// Revision is the saved manifest revision carrying the new name (0
	// without a manifest).
	Revision int64 `json:"revision"`
}

// applicationRename renames an application, keeping its identity and
// resources; the saved manifest's metadata.name follows.
func (h *handler) applicationRename(c *fiber.Ctx) error {
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	expected, bad := ifMatch(c)
	if bad != nil {
		return bad.write(c)
	}
	var req ApplicationRenameRequest
	if bad := decode(c.Body(), &req); bad != nil {
		return bad.write(c)
	}
	res, err := service.RenameApplication(c.UserContext(), h.store, callerOf(c).actor(), h.enqueue, a.ID, req.Name, expected)
	if err != nil {
		return h.failEdit(c, err)
	}
	return c.JSON(ApplicationRenamed{Application: newApplication(res.Application), OldName: res.OldName, Revision: res.Revision})
}
