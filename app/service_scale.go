package app

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
)

// serviceScale sets a service's replicas (a field edit of the manifest:
// the environment's variable when replicas references one) and deploys
// the environment; the browser lands on that deployment.
func (h *handler) serviceScale(c *fiber.Ctx) error {
	a, _, err := h.loadApplication(c, "overview")
	if err != nil {
		return err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(c.FormValue("replicas")), 10, 64)
	if err != nil {
		return h.renderError(c, http.StatusUnprocessableEntity, "replicas_invalid", "Replicas must be a whole number from 1 to 100.")
	}
	res, err := service.ScaleService(c.UserContext(), h.store, visitorOf(c).actor(), h.enqueue, a.ID, c.Params("environment"), c.Params("service"), n)
	if err != nil {
		return h.serviceActionRefused(c, err)
	}
	msg := "Scaled " + c.Params("service") + " in " + c.Params("environment") + " to " + strconv.FormatInt(n, 10) + " replicas (revision " + strconv.FormatInt(res.Revision.Revision, 10) + ")"
	if res.Deployment.ID == "" {
		h.flashOK(c, msg+"; it takes effect with the next promotion.")
		return redirect(c, "/applications/"+a.ID)
	}
	h.flashOK(c, msg+": deploying it, the timeline below follows.")
	return redirect(c, "/applications/"+a.ID+"/deployments/"+res.Deployment.ID)
}

// serviceActionRefused shows why a restart or scale was refused, naming
// the field and code; other errors go to the error handler.
func (h *handler) serviceActionRefused(c *fiber.Ctx, err error) error {
	var ie *service.InputError
	var nf *service.NotFoundError
	switch {
	case errors.As(err, &ie):
		return h.renderError(c, http.StatusUnprocessableEntity, ie.Code, ie.Field+": "+ie.Message)
	case errors.As(err, &nf):
		return h.renderError(c, http.StatusNotFound, nf.Code, nf.Field+": "+nf.Message)
	}
	return err
}
