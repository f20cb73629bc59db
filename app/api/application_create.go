package api

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
)

// ApplicationCreateRequest is the body of POST /applications.
type ApplicationCreateRequest struct {
	Name string `json:"name"`
}

// applicationCreate creates an empty application; manifests arrive through
// apply (the manifest issue).
func (h *handler) applicationCreate(c *fiber.Ctx) error {
	var req ApplicationCreateRequest
	if bad := decode(c.Body(), &req); bad != nil {
		return bad.write(c)
	}
	a, err := service.CreateApplication(c.UserContext(), h.store, callerOf(c).actor(), req.Name)
	if err != nil {
		return h.fail(c, err)
	}
	return c.Status(http.StatusCreated).JSON(newApplication(a))
}
