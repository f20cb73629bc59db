package api

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
)

// ServiceScaleRequest is the body of POST …/services/{service}/scale.
type ServiceScaleRequest struct {
	Replicas int64 `json:"replicas"`
}

// ServiceScaled is what a scale changed: the revision it saved, the
// variable it set ("" when spec.services[].replicas changed) and the
// deployment of the environment it requested (absent for an environment
// that only receives promotions).
type ServiceScaled struct {
	Revision   int64       `json:"revision"`
	Variable   string      `json:"variable,omitempty"`
	Deployment *Deployment `json:"deployment,omitempty"`
}

func (h *handler) registerServiceControls(r fiber.Router) {
	r.Post("/applications/:app/environments/:env/services/:service/restart", h.requireScope(auth.AppsDeploy), h.serviceRestart)
	r.Post("/applications/:app/environments/:env/services/:service/scale", h.requireScope(auth.AppsDeploy), h.serviceScale)
}

// serviceRestart queues a forced rolling update of a running service:
// 202, the worker carries it out.
func (h *handler) serviceRestart(c *fiber.Ctx) error {
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	if err := service.RestartService(c.UserContext(), h.store, callerOf(c).actor(), h.enqueue, a.ID, h.environmentName(c, a.ID), c.Params("service")); err != nil {
		return h.fail(c, err)
	}
	return c.Status(http.StatusAccepted).JSON(map[string]any{"service": c.Params("service"), "restart": "queued"})
}

// serviceScale sets a service's replicas and deploys the environment.
func (h *handler) serviceScale(c *fiber.Ctx) error {
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	var req ServiceScaleRequest
	if bad := decode(c.Body(), &req); bad != nil {
		return bad.write(c)
	}
	res, err := service.ScaleService(c.UserContext(), h.store, callerOf(c).actor(), h.enqueue, a.ID, h.environmentName(c, a.ID), c.Params("service"), req.Replicas)
	if err != nil {
		return h.fail(c, err)
	}
	out := ServiceScaled{Revision: res.Revision.Revision, Variable: res.Variable}
	if res.Deployment.ID != "" {
		d := newDeployment(res.Deployment, h.environmentName(c, a.ID))
		out.Deployment = &d
	}
	return c.Status(http.StatusAccepted).JSON(out)
}
