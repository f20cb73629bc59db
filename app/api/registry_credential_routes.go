package api

import (
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
)

// RegistryCredential is a team's account on an image registry. There is
// deliberately no password field: passwords are write-only.
type RegistryCredential struct {
	// Host is the registry's host[:port] ("docker.io" for Docker Hub).
	Host      string    `json:"host"`
	Username  string    `json:"username"`
	CreatedBy string    `json:"created_by,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// RegistryCredentialList is GET /registry-credentials.
type RegistryCredentialList struct {
	RegistryCredentials []RegistryCredential `json:"registry_credentials"`
}

// RegistryCredentialSetRequest is PUT /registry-credentials/{host}.
type RegistryCredentialSetRequest struct {
	Username string `json:"username"`
	// Password is the password or access token; it is sealed at once and
	// never returned.
	Password *string `json:"password"`
}

func newRegistryCredential(c store.RegistryCredential) RegistryCredential {
	return RegistryCredential{Host: c.Host, Username: c.Username, CreatedBy: c.CreatedBy, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

// registerRegistryCredentials mounts the team's registry accounts.
// Listing hosts needs apps:read; setting and deleting need secrets:write.
func (h *handler) registerRegistryCredentials(r fiber.Router) {
	read, write := h.requireScope(auth.AppsRead), h.requireScope(auth.SecretsWrite)
	r.Get("/registry-credentials", read, h.registryCredentialList)
	r.Put("/registry-credentials/:host", write, h.registryCredentialSet)
	r.Delete("/registry-credentials/:host", write, h.registryCredentialDelete)
}

// registryHost is the {host} path parameter, unescaped.
func registryHost(c *fiber.Ctx) string {
	h, err := url.PathUnescape(c.Params("host"))
	if err != nil {
		return c.Params("host")
	}
	return h
}

// registryCredentialFail answers a refusal; a missing credential is 404.
func (h *handler) registryCredentialFail(c *fiber.Ctx, err error) error {
	var se *secrets.Error
	if errors.As(err, &se) && se.Code == secrets.CodeRegistryCredentialMissing {
		return WriteError(c, http.StatusNotFound, se.Code, se.Message, map[string]any{"field": se.Field})
	}
	return h.secretFail(c, err)
}
