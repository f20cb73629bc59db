package app

import (
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// environmentPromote shows the plan of promoting an environment (GET) or
// promotes the source deployment the plan showed (POST, deployment_id),
// refused with promotion_source_changed once the source moved on.
func (h *handler) environmentPromote(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "environments")
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	env, err := h.store.GetEnvironment(ctx, a.TeamID, c.Params("environment"))
	if err != nil {
		return err
	}
	if env.ApplicationID != a.ID {
		return fiber.ErrNotFound
	}
	opts := api.PromotionChecks(h.runtime, h.secrets)
	opts.Plan = c.Method() != fiber.MethodPost
	opts.DeploymentID = c.FormValue("deployment_id")
	res, err := service.PromoteEnvironment(ctx, h.store, visitorOf(c).actor(), h.enqueue, a.ID, env.Name, opts)
	var ie *service.InputError
	if errors.As(err, &ie) {
		// Show the refusal above a fresh plan of the source's current
		// deployment, so what is reviewed next is what runs now.
		opts.Plan, opts.DeploymentID = true, ""
		if fresh, err := service.PromoteEnvironment(ctx, h.store, visitorOf(c).actor(), h.enqueue, a.ID, env.Name, opts); err == nil {
			res = fresh
		}
		view := promotionView(env, res.Plan)
		view.Error = ie.Message + " (" + ie.Code + ")"
		return h.render(c, http.StatusUnprocessableEntity, a.Name+" · Promote "+env.Name, page.ApplicationPromotion(header, view))
	}
	if err != nil {
		return err
	}
	if res.Deployment != nil {
		return redirect(c, "/applications/"+a.ID+"/deployments/"+res.Deployment.ID)
	}
	return h.render(c, http.StatusOK, a.Name+" · Promote "+env.Name, page.ApplicationPromotion(header, promotionView(env, res.Plan)))
}

func promotionView(env store.Environment, p service.PromotionPlan) page.PromotionView {
	v := page.PromotionView{EnvironmentID: env.ID, Environment: env.Name, SourceEnvironment: p.SourceEnvironment,
		SourceDeployment: p.SourceDeployment, ReleaseID: p.ReleaseID, ReleaseEnv: p.ReleaseEnvironment, NewVolumes: p.NewVolumes}
	for _, img := range p.Images {
		state := "not checked"
		if img.Present != nil {
			state = map[bool]string{true: "present", false: "missing"}[*img.Present]
		}
		ref := img.ImageID
		if ref == "" {
			ref = img.Reference
		}
		v.Images = append(v.Images, page.PromotionImageRow{Service: img.Service, Image: ref, State: state})
	}
	for _, ch := range p.Changes {
		v.Changes = append(v.Changes, page.PromotionChangeRow{Kind: ch.Kind, Path: ch.Path, Before: ch.Before, After: ch.After})
	}
	for _, pr := range p.Problems {
		v.Problems = append(v.Problems, pr.Code+": "+pr.Message)
	}
	return v
}
