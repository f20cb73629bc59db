package app

import (
	"context"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
)

// healthShow answers 200 when the database answers, for load balancers and
// `slipway dev`'s readiness wait.
func (h *handler) healthShow(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
	defer cancel()
	if _, err := h.store.CountUsers(ctx); err != nil {
		h.log.WarnContext(ctx, "health check failed", "err", err)
		return c.Status(http.StatusServiceUnavailable).JSON(fiber.Map{"status": "unavailable", "database": "unreachable"})
	}
	return c.JSON(fiber.Map{"status": "ok"})
}
