package app

import (
	"fmt"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/manifest"
)

// schemaPath is where the dashboard serves the manifest's JSON Schema,
// for editors that validate as you type (taplo reads the #:schema line).
const schemaPath = "/manifest/schema.json"

// starterManifest is a valid manifest to start from: one web service from
// an image behind one route whose hostname is a variable, so each
// environment can serve its own.
func starterManifest(name, publicURL string) string {
	return fmt.Sprintf(`#:schema %s%s
# A starting point: one web service from a prebuilt image behind one route.
# Replace the image and the domain, then Save; Deploy runs it.
api_version = "slipway.dev/v1alpha1"
kind = "Application"

[metadata]
name = %q

# Values that differ between environments: staging can set its own
# domain in [spec.environments.staging.variables].
[spec.variables]
domain = "%s.example.com"

[[spec.services]]
name = "web"
replicas = 1

[spec.services.source]
type = "image"
image = "ghcr.io/example/hello:1.0.0" # your image

[spec.services.environment]
PORT = "8080"

[spec.services.healthcheck]
type = "http"
port = 8080
path = "/"

[[spec.routes]]
hostname = "${{ vars.domain }}"
service = "web"
port = 8080
visibility = "public"
`, publicURL, schemaPath, name, name)
}

// manifestSchema serves the manifest's JSON Schema.
func (h *handler) manifestSchema(c *fiber.Ctx) error {
	b, err := manifest.Schema()
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
	return c.Status(http.StatusOK).Send(b)
}
