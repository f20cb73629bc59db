package api

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
)

// Secret is a stored secret's metadata. There is deliberately no value
// field: values are write-only.
type Secret struct {
	Name    string `json:"name"`
	Version int    `json:"version"`
	// AllEnvironments grants every environment, including later ones;
	// otherwise only Environments (names). Previews need Previews.
	AllEnvironments bool      `json:"all_environments"`
	Environments    []string  `json:"environments"`
	Previews        bool      `json:"previews"`
	CreatedBy       string    `json:"created_by,omitempty"`
	CreatedAt       time.Time `json:"created_at"`
	UpdatedAt       time.Time `json:"updated_at"`
}

// SecretList is GET /applications/{app}/secrets.
type SecretList struct {
	Secrets []Secret `json:"secrets"`
}

// SecretSetRequest is PUT /applications/{app}/secrets/{name}. Environments
// and Previews, when sent, replace the access list in the same request.
type SecretSetRequest struct {
	Value        *string   `json:"value"`
	Environments *[]string `json:"environments,omitempty"`
	Previews     *bool     `json:"previews,omitempty"`
}

// SecretAccessRequest is PUT /applications/{app}/secrets/{name}/access.
// AllEnvironments (the default when Environments is absent) grants every
// environment; otherwise only the named ones.
type SecretAccessRequest struct {
	AllEnvironments *bool    `json:"all_environments,omitempty"`
	Environments    []string `json:"environments,omitempty"`
	Previews        *bool    `json:"previews,omitempty"`
}

// GeneratedSecret is an environment's generated value: metadata only.
type GeneratedSecret struct {
	Name        string    `json:"name"`
	Version     int       `json:"version"`
	Regenerate  bool      `json:"regenerate_pending"`
	GeneratedAt time.Time `json:"generated_at"`
	CreatedAt   time.Time `json:"created_at"`
}

// GeneratedSecretList is GET /applications/{app}/environments/{env}/generated-secrets.
type GeneratedSecretList struct {
	Environment      string            `json:"environment"`
	GeneratedSecrets []GeneratedSecret `json:"generated_secrets"`
}

// registerSecrets mounts the secret routes. Reading names needs apps:read;
// every change needs secrets:write.
func (h *handler) registerSecrets(r fiber.Router) {
	read, write := h.requireScope(auth.AppsRead), h.requireScope(auth.SecretsWrite)
	r.Get("/applications/:app/secrets", read, h.secretList)
	r.Put("/applications/:app/secrets/:name", write, h.secretSet)
	r.Delete("/applications/:app/secrets/:name", write, h.secretDelete)
	r.Put("/applications/:app/secrets/:name/access", write, h.secretAccess)
	r.Get("/applications/:app/environments/:env/generated-secrets", read, h.generatedSecretList)
	r.Post("/applications/:app/environments/:env/generated-secrets/:name/regenerate", write, h.generatedSecretRegenerate)
}

// secretRequest is how every secret route starts: the application first
// (another team's is 404 whatever else), then the secret service, then the
// body decoded into body unless it is nil. done says a refusal has been
// written; the handler then returns err.
func (h *handler) secretRequest(c *fiber.Ctx, body any) (a store.Application, svc *secrets.Service, done bool, err error) {
	if a, err = h.application(c); err != nil {
		return a, nil, true, h.fail(c, err)
	}
	if svc, err = h.secretService(c); svc == nil {
		return a, nil, true, err
	}
	if body != nil {
		if bad := decode(c.Body(), body); bad != nil {
			return a, nil, true, bad.write(c)
		}
	}
	return a, svc, false, nil
}

// secretService answers secrets_unavailable when the server runs without
// a keyring.
func (h *handler) secretService(c *fiber.Ctx) (*secrets.Service, error) {
	if h.secrets == nil {
		return nil, WriteError(c, http.StatusServiceUnavailable, "secrets_unavailable",
			"the server has no secret key configured (SLIPWAY_SECRET_KEY_FILE)", nil)
	}
	return h.secrets, nil
}

// secretFail answers a secrets refusal with its code, field and names;
// anything else goes to fail.
func (h *handler) secretFail(c *fiber.Ctx, err error) error {
	var se *secrets.Error
	if !errors.As(err, &se) {
		return h.fail(c, err)
	}
	status := http.StatusUnprocessableEntity
	switch se.Code {
	case secrets.CodeNotFound, secrets.CodeGeneratedNotFound:
		status = http.StatusNotFound
	case secrets.CodeNameConflict:
		status = http.StatusConflict
	}
	details := map[string]any{"names": se.Names}
	if se.Field != "" {
		details["field"] = se.Field
	}
	return WriteError(c, status, se.Code, se.Message, details)
}

// environmentIDs resolves environment names (or ids) of the application;
// an unknown one is refused naming it.
func (h *handler) environmentIDs(c *fiber.Ctx, a store.Application, refs []string) ([]string, error) {
	names, err := h.environmentNames(c.UserContext(), a.TeamID, a.ID)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(refs))
	for _, ref := range refs {
		id := ""
		for eid, name := range names {
			if name == ref || eid == ref {
				id = eid
			}
		}
		if id == "" {
			return nil, &secrets.Error{Code: secrets.CodeEnvironmentUnknown, Field: "environments",
				Message: "environments lists " + ref + ", which is not an environment of " + a.Name + "; see slipway env list"}
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func newSecret(s store.Secret, envNames map[string]string) Secret {
	out := Secret{
		Name: s.Name, Version: s.CurrentVersion, AllEnvironments: s.AllEnvironments, Environments: []string{},
		Previews: s.Previews, CreatedBy: s.CreatedBy, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
	}
	for _, id := range s.EnvironmentIDs {
		if n, ok := envNames[id]; ok {
			out.Environments = append(out.Environments, n)
		}
	}
	slices.Sort(out.Environments)
	return out
}

// secretActor is who a version is recorded as written by.
func secretActor(c *fiber.Ctx) string {
	return "token:" + callerOf(c).token.ID
}

// respondSecret writes one secret's metadata, or the refusal opErr of the
// operation that produced it.
func (h *handler) respondSecret(c *fiber.Ctx, a store.Application, s store.Secret, opErr error) error {
	if opErr != nil {
		return h.secretFail(c, opErr)
	}
	names, err := h.environmentNames(c.UserContext(), a.TeamID, a.ID)
	if err != nil {
		return h.fail(c, err)
	}
	return c.JSON(newSecret(s, names))
}

// trimmedName is the :name parameter; the service validates it.
func trimmedName(c *fiber.Ctx) string { return strings.TrimSpace(c.Params("name")) }
