package app

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
)

// serviceRestart restarts a service's tasks (a forced rolling update, run
// by a worker) and shows its logs, where the new tasks' output appears.
func (h *handler) serviceRestart(c *fiber.Ctx) error {
	a, _, err := h.loadApplication(c, "overview")
	if err != nil {
		return err
	}
	env, svc := c.Params("environment"), c.Params("service")
	if err := service.RestartService(c.UserContext(), h.store, visitorOf(c).actor(), h.enqueue, a.ID, env, svc); err != nil {
		return h.serviceActionRefused(c, err)
	}
	return redirect(c, serviceLogsURL(a.ID, env, svc)+"?restarted=1")
}
