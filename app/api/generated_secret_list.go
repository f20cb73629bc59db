package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
)

func newGeneratedSecret(g store.GeneratedSecret) GeneratedSecret {
	return GeneratedSecret{Name: g.Name, Version: g.CurrentVersion, Regenerate: g.Regenerate, GeneratedAt: g.GeneratedAt, CreatedAt: g.CreatedAt}
}

func (h *handler) generatedSecretList(c *fiber.Ctx) error {
	// The application first: another team's is 404 whatever else.
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	svc, err := h.secretService(c)
	if svc == nil {
		return err
	}
	env, err := h.namedEnvironment(c, a)
	if err != nil {
		return h.fail(c, err)
	}
	list, err := svc.Generated(c.UserContext(), a.TeamID, env.ID)
	if err != nil {
		return h.secretFail(c, err)
	}
	out := GeneratedSecretList{Environment: env.Name, GeneratedSecrets: make([]GeneratedSecret, 0, len(list))}
	for _, g := range list {
		out.GeneratedSecrets = append(out.GeneratedSecrets, newGeneratedSecret(g))
	}
	return c.JSON(out)
}
