package app

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// deploymentAction runs one of the deployment page's buttons and goes to
// the deployment it leads to; a refusal (already finished, promoted
// environment, ...) is shown on the page beside the buttons.
func (h *handler) deploymentAction(c *fiber.Ctx, act func(d store.Deployment, env store.Environment) (store.Deployment, error)) error {
	a, header, d, err := h.loadDeployment(c, "deployments")
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	env, err := h.store.GetEnvironment(ctx, a.TeamID, d.EnvironmentID)
	if err != nil {
		return err
	}
	next, err := act(d, env)
	var ie *service.InputError
	if errors.As(err, &ie) {
		who, err := h.people(ctx, a.TeamID)
		if err != nil {
			return err
		}
		if d, err = h.store.GetDeployment(ctx, a.TeamID, d.ID); err != nil {
			return err
		}
		v, err := h.deploymentDetail(ctx, d, env, who)
		if err != nil {
			return err
		}
		v.ActionError = ie.Message + " (" + ie.Code + ")"
		if isFragment(c) {
			c.Set("HX-Retarget", "#main")
			c.Set("HX-Reswap", "innerHTML")
		}
		return h.render(c, http.StatusUnprocessableEntity, a.Name+" · Deployment", page.DeploymentDetail(header, v))
	}
	if err != nil {
		return err
	}
	h.flashOK(c, deploymentActionMessage(c.Path(), env.Name, next))
	return redirect(c, "/applications/"+a.ID+"/deployments/"+next.ID)
}

// deploymentActionMessage says what a deployment page's button did.
func deploymentActionMessage(path, env string, next store.Deployment) string {
	rev := strconv.FormatInt(next.Revision, 10)
	switch {
	case strings.HasSuffix(path, "/cancel"):
		return "Deployment of " + env + " cancelled; " + env + " keeps running what it ran before."
	case strings.HasSuffix(path, "/restore"):
		return "Rolling " + env + " back to revision " + rev + ", exactly as that deployment ran: the timeline below follows it."
	}
	return "Deploying " + env + " again at revision " + rev + ": the timeline below follows it."
}
