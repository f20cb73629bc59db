package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
)

// GeneratedSecretDeclarations is PUT /applications/{app}/generated-secrets:
// every spec.secrets declaration, replacing the saved ones.
type GeneratedSecretDeclarations struct {
	Secrets []manifest.SecretDeclaration `json:"secrets"`
}

// generatedSecretsReplace replaces every generated-secret declaration;
// dropping one a service or job still mounts is refused (secret_mounted).
func (h *handler) generatedSecretsReplace(c *fiber.Ctx) error {
	return h.runEdit(c, func(appID string) (func(*manifest.Manifest) error, *badBody, error) {
		var req GeneratedSecretDeclarations
		if bad := decode(c.Body(), &req); bad != nil {
			return nil, bad, nil
		}
		edit, err := service.ReplaceSecretDeclarations(c.UserContext(), h.store, callerOf(c).actor(), appID, req.Secrets)
		return edit, nil, err
	})
}

// generatedSecretDeclare declares the generated secret named in the path,
// or replaces its declaration; values already generated are kept.
func (h *handler) generatedSecretDeclare(c *fiber.Ctx) error {
	return h.runEdit(c, func(string) (func(*manifest.Manifest) error, *badBody, error) {
		var d manifest.SecretDeclaration
		if bad := decodeNamed(c.Body(), &d, &d.Name, c.Params("name")); bad != nil {
			return nil, bad, nil
		}
		return service.DeclareSecret(d), nil, nil
	})
}

// generatedSecretUndeclare removes the declaration named in the path;
// values already generated are kept.
func (h *handler) generatedSecretUndeclare(c *fiber.Ctx) error {
	return h.runEdit(c, func(appID string) (func(*manifest.Manifest) error, *badBody, error) {
		edit, err := service.UndeclareSecret(c.UserContext(), h.store, callerOf(c).actor(), appID, c.Params("name"))
		return edit, nil, err
	})
}
