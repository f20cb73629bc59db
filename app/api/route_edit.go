package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
)

// routeSet adds or replaces the route named in the path; the body is the
// route, whose name may be left out.
func (h *handler) routeSet(c *fiber.Ctx) error {
	return h.runEdit(c, func(string) (func(*manifest.Manifest) error, *badBody, error) {
		var r manifest.Route
		if bad := decodeNamed(c.Body(), &r, &r.Name, c.Params("route")); bad != nil {
			return nil, bad, nil
		}
		return service.SetRoute(r), nil, nil
	})
}

// routeRemove removes the route named in the path.
func (h *handler) routeRemove(c *fiber.Ctx) error {
	return h.runEdit(c, func(string) (func(*manifest.Manifest) error, *badBody, error) {
		return service.RemoveRoute(c.Params("route")), nil, nil
	})
}

// decodeNamed decodes a body whose name field, when present, must be the
// name in the path; the path's name fills it in otherwise.
func decodeNamed(body []byte, v any, name *string, fromPath string) *badBody {
	if bad := decode(body, v); bad != nil {
		return bad
	}
	if *name != "" && *name != fromPath {
		return &badBody{"name_mismatch", "the body's name differs from the path's: rename by removing and adding", map[string]any{"field": "name"}}
	}
	*name = fromPath
	return nil
}
