package app

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/savedmanifest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// environmentPromote shows the plan of promoting an environment (GET) or
// promotes the source deployment the plan showed (POST, deployment_id),
// refused with promotion_source_changed once the source moved on.
func (h *handler) environmentPromote(c *fiber.Ctx) error {
	a, header, env, err := h.loadEnvironment(c, "environments")
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	if env.Kind != store.KindEnvironment {
		return fiber.ErrNotFound // previews are never promoted
	}
	if env.PromoteFrom == "" && c.Method() != fiber.MethodPost {
		// Not promoted yet: offer to choose where it receives releases from.
		view, err := h.promotionSourceView(c, a, env)
		if err != nil {
			return err
		}
		return h.render(c, http.StatusOK, a.Name+" · Promote "+env.Name, page.ApplicationPromotion(header, view))
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
		view := h.promotionView(c, env, res.Plan)
		view.Error = ie.Message + " (" + ie.Code + ")"
		return h.render(c, http.StatusUnprocessableEntity, a.Name+" · Promote "+env.Name, page.ApplicationPromotion(header, view))
	}
	if err != nil {
		return err
	}
	if res.Deployment != nil {
		h.flashOK(c, fmt.Sprintf("Promoting %s's revision %d to %s. The timeline below follows it; %s keeps running what it ran until the rollout succeeds.", res.Plan.SourceEnvironment, res.Deployment.Revision, env.Name, env.Name))
		return redirect(c, "/applications/"+a.ID+"/deployments/"+res.Deployment.ID)
	}
	return h.render(c, http.StatusOK, a.Name+" · Promote "+env.Name, page.ApplicationPromotion(header, h.promotionView(c, env, res.Plan)))
}

// promotionView is a plan as people read it: the source's revision, not
// its deployment id; images by name and tag, not digest.
func (h *handler) promotionView(c *fiber.Ctx, env store.Environment, p service.PromotionPlan) page.PromotionView {
	v := page.PromotionView{EnvironmentID: env.ID, Environment: env.Name, SourceEnvironment: p.SourceEnvironment,
		SourceDeployment: p.SourceDeployment, ReleaseID: p.ReleaseID, ReleaseEnv: p.ReleaseEnvironment,
		ReleaseRevision: p.ReleaseRevision, NewVolumes: p.NewVolumes}
	if p.SourceDeployment != "" {
		if d, err := h.store.GetDeployment(c.UserContext(), env.TeamID, p.SourceDeployment); err == nil {
			v.SourceRevision = d.Revision
		}
	}
	for _, img := range p.Images {
		state := "not checked"
		if img.Present != nil {
			state = map[bool]string{true: "present", false: "missing"}[*img.Present]
		}
		full := img.Reference
		if img.ImageID != "" {
			full += " " + img.ImageID
		}
		v.Images = append(v.Images, page.PromotionImageRow{Service: img.Service, Image: imageName(img.Reference, img.ImageID), Full: full, State: state})
	}
	for _, ch := range p.Changes {
		v.Changes = append(v.Changes, page.PromotionChangeRow{Kind: ch.Kind, Path: ch.Path, Before: ch.Before, After: ch.After})
	}
	for _, pr := range p.Problems {
		v.Problems = append(v.Problems, pr.Code+": "+pr.Message)
	}
	return v
}

// imageName is an image as people name it: the last path element of its
// reference without the digest (uxdemo:2), else a short image id.
func imageName(reference, imageID string) string {
	ref, _, _ := strings.Cut(reference, "@")
	if i := strings.LastIndex(ref, "/"); i >= 0 {
		ref = ref[i+1:]
	}
	if ref != "" {
		return ref
	}
	return shortImage(imageID)
}

// promotionSourceView offers the environments env could receive releases
// from.
func (h *handler) promotionSourceView(c *fiber.Ctx, a store.Application, env store.Environment) (page.PromotionView, error) {
	v := page.PromotionView{EnvironmentID: env.ID, Environment: env.Name, NeedsSource: true}
	envs, err := h.store.ListEnvironments(c.UserContext(), a.TeamID, a.ID)
	if err != nil {
		return v, err
	}
	for _, e := range envs {
		if e.Kind == store.KindEnvironment && e.ID != env.ID {
			v.Sources = append(v.Sources, e.Name)
		}
	}
	m, _, err := savedmanifest.CurrentLenient(c.UserContext(), h.store, a.TeamID, a.ID)
	if err != nil {
		return v, err
	}
	if m != nil {
		_, v.Declared = m.Spec.Environments[env.Name]
	}
	return v, nil
}

// environmentPromoteFrom makes the environment receive releases promoted
// from the chosen one (service.SetPromoteFrom: in its manifest block when
// declared), then shows the promotion's plan.
func (h *handler) environmentPromoteFrom(c *fiber.Ctx) error {
	a, header, env, err := h.loadEnvironment(c, "environments")
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	if env.Kind != store.KindEnvironment {
		return fiber.ErrNotFound
	}
	source := c.FormValue("promote_from")
	res, err := service.SetPromoteFrom(ctx, h.store, visitorOf(c).actor(), h.enqueue, a.ID, env.Name, source, formRevision(c))
	if msg, ok := editErrorMessage(err); ok {
		view, verr := h.promotionSourceView(c, a, env)
		if verr != nil {
			return verr
		}
		view.Error = msg
		return h.render(c, http.StatusUnprocessableEntity, a.Name+" · Promote "+env.Name, page.ApplicationPromotion(header, view))
	}
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("%s now receives releases promoted from %s (stored on the environment). Review the promotion below.", env.Name, source)
	if res.Declared {
		msg = fmt.Sprintf("%s now receives releases promoted from %s: saved as revision %d (promote_from in [spec.environments.%s]). Review the promotion below.", env.Name, source, res.Revision, env.Name)
	}
	h.flashOK(c, msg)
	return redirect(c, "/applications/"+a.ID+"/environments/"+env.ID+"/promote")
}
