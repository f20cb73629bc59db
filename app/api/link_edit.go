package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
)

// ExportSetRequest is PUT /applications/{app}/exports/{service}.
type ExportSetRequest struct {
	// Applications may import the service.
	Applications []string `json:"applications"`
	// Previews lets their previews import it too.
	Previews bool `json:"previews,omitempty"`
}

// exportSet exports a service, or replaces who may import it.
func (h *handler) exportSet(c *fiber.Ctx) error {
	return h.runEdit(c, func(string) (func(*manifest.Manifest) error, *badBody, error) {
		var req ExportSetRequest
		if bad := decode(c.Body(), &req); bad != nil {
			return nil, bad, nil
		}
		return service.SetExport(manifest.Export{Service: c.Params("service"), Applications: req.Applications, Previews: req.Previews}), nil, nil
	})
}

// exportRemove stops exporting a service.
func (h *handler) exportRemove(c *fiber.Ctx) error {
	return h.runEdit(c, func(string) (func(*manifest.Manifest) error, *badBody, error) {
		return service.RemoveExport(c.Params("service")), nil, nil
	})
}

// ImportSetRequest is the optional body of PUT
// /applications/{app}/imports/{application}/{service}.
type ImportSetRequest struct {
	// Environment of the exporting application; default the same name.
	Environment string `json:"environment,omitempty"`
}

// importSet imports another application's exported service.
func (h *handler) importSet(c *fiber.Ctx) error {
	return h.runEdit(c, func(string) (func(*manifest.Manifest) error, *badBody, error) {
		var req ImportSetRequest
		if len(c.Body()) > 0 {
			if bad := decode(c.Body(), &req); bad != nil {
				return nil, bad, nil
			}
		}
		return service.SetImport(manifest.Import{Application: c.Params("application"), Service: c.Params("service"), Environment: req.Environment}), nil, nil
	})
}

// importRemove removes an import.
func (h *handler) importRemove(c *fiber.Ctx) error {
	return h.runEdit(c, func(string) (func(*manifest.Manifest) error, *badBody, error) {
		return service.RemoveImport(c.Params("application"), c.Params("service")), nil, nil
	})
}
