package app

import (
	"errors"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/views/page"
)

// environmentDeploy deploys the environment from the saved manifest.
func (h *handler) environmentDeploy(c *fiber.Ctx) error {
	a, header, env, err := h.loadEnvironment(c, "environments")
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	d, err := service.RequestDeployment(ctx, h.store, visitorOf(c).actor(), h.enqueue, a.ID, env.Name)
	var ie *service.InputError
	if errors.As(err, &ie) {
		t, err := h.environmentsTab(c, a, map[string]string{env.ID: ie.Message + " (" + ie.Code + ")"}, "")
		if err != nil {
			return err
		}
		if isFragment(c) {
			// The confirm-then-post came from htmx: show the whole tab with
			// the error beside the environment's button.
			c.Set("HX-Retarget", "#main")
			c.Set("HX-Reswap", "innerHTML")
		}
		return h.render(c, formErrorStatus(c), a.Name+" · Environments",
			page.ApplicationEnvironments(header, t))
	}
	if err != nil {
		return err
	}
	h.flashOK(c, fmt.Sprintf("Deploying %s at revision %d. The timeline below follows it; the environment keeps running what it ran until the rollout succeeds.", env.Name, d.Revision))
	return redirect(c, "/applications/"+a.ID+"/deployments/"+d.ID)
}
