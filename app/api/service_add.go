package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
)

// serviceAdd adds the service in the body, a [[spec.services]] entry as
// JSON; a service of that name already there is 409 service_name_taken.
func (h *handler) serviceAdd(c *fiber.Ctx) error {
	return h.runEdit(c, func(string) (func(*manifest.Manifest) error, *badBody, error) {
		s, bad := decodeService(c.Body())
		if bad != nil {
			return nil, bad, nil
		}
		return service.AddService(s), nil, nil
	})
}

// serviceRemove removes the service in the path, dropping it from other
// services' depends_on; jobs, routes or exports still naming it refuse
// the removal (422, service_referenced on each of their paths).
func (h *handler) serviceRemove(c *fiber.Ctx) error {
	return h.runEdit(c, func(string) (func(*manifest.Manifest) error, *badBody, error) {
		return service.RemoveService(c.Params("service")), nil, nil
	})
}

// decodeService reads one service through the manifest's own strict
// decoder, so a mistyped integer or repository ("replicas": "two") is
// refused naming its field rather than read as zero, as a plain JSON
// decode of manifest.Service would.
func decodeService(body []byte) (manifest.Service, *badBody) {
	trimmed := bytes.TrimSpace(body)
	// json.Valid makes the body one complete value, so it can't reach
	// outside the array it is placed in below.
	if !json.Valid(trimmed) || len(trimmed) == 0 || trimmed[0] != '{' {
		return manifest.Service{}, &badBody{"json_malformed", "the body must be a single JSON object: one service", nil}
	}
	doc := `{"api_version":"` + manifest.APIVersion + `","kind":"` + manifest.Kind + `","metadata":{"name":"body"},"spec":{"services":[` + string(trimmed) + `]}}`
	m, err := manifest.Decode([]byte(doc), "json")
	var errs manifest.Errors
	if errors.As(err, &errs) && len(errs) > 0 {
		field := strings.TrimPrefix(strings.TrimPrefix(errs[0].Path, "spec.services[0]"), ".")
		return manifest.Service{}, &badBody{errs[0].Code, strings.ReplaceAll(errs[0].Message, "spec.services[0]", "the service"), map[string]any{"field": field}}
	}
	if err != nil {
		return manifest.Service{}, &badBody{"json_malformed", err.Error(), nil}
	}
	return m.Spec.Services[0], nil
}
