package api

import (
	"github.com/gofiber/fiber/v2"
)

// generatedSecretRegenerate marks a generated value for renewal by the
// environment's next deployment; the running one keeps its value.
func (h *handler) generatedSecretRegenerate(c *fiber.Ctx) error {
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
	g, err := svc.Regenerate(c.UserContext(), a.TeamID, env.ID, trimmedName(c))
	if err != nil {
		return h.secretFail(c, err)
	}
	return c.JSON(newGeneratedSecret(g))
}
