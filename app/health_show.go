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
	// Whether this process keeps sessions, tokens and the busiest pages'
	// reads between changes ("on"), or reads Postgres for each ("off":
	// starting, or the listen for changes is lost).
	caches := "off"
	if h.authCache.Listening() && h.teamReads.Listening() {
		caches = "on"
	}
	return c.JSON(fiber.Map{"status": "ok", "caches": caches})
}
