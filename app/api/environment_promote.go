package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
)

// registerPromotion mounts promotion, releases and environment sources.
func (h *handler) registerPromotion(r fiber.Router) {
	r.Post("/applications/:app/environments/:env/promote", h.requireScope(auth.AppsDeploy), h.environmentPromote)
	r.Put("/applications/:app/environments/:env/source", h.requireScope(auth.AppsWrite), h.environmentSource)
	r.Get("/applications/:app/releases", h.requireScope(auth.AppsRead), h.releaseList)
}

// PromoteRequest is the body of POST .../environments/{env}/promote.
type PromoteRequest struct {
	DeploymentID string `json:"deployment_id,omitempty"`
	ReleaseID    string `json:"release_id,omitempty"`
	Plan         bool   `json:"plan,omitempty"`
}

// PromoteResponse is a promotion's plan and, unless only planned, the
// deployment it requested (202).
type PromoteResponse struct {
	Plan       service.PromotionPlan `json:"plan"`
	Deployment *Deployment           `json:"deployment,omitempty"`
}

// environmentPromote plans or requests a promotion. A refusal is 422 with
// the first problem's code and every problem in details.problems.
func (h *handler) environmentPromote(c *fiber.Ctx) error {
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	var req PromoteRequest
	if len(c.Body()) > 0 {
		if bad := decode(c.Body(), &req); bad != nil {
			return bad.write(c)
		}
	}
	opts := PromotionChecks(h.runtime, h.secrets)
	opts.DeploymentID, opts.ReleaseID, opts.Plan = req.DeploymentID, req.ReleaseID, req.Plan
	res, err := service.PromoteEnvironment(c.UserContext(), h.store, callerOf(c).actor(), h.enqueue, a.ID, h.environmentName(c, a.ID), opts)
	var pe *service.PromotionError
	if errors.As(err, &pe) {
		first := pe.Problems[0]
		return WriteError(c, http.StatusUnprocessableEntity, first.Code, err.Error(), map[string]any{
			"field": first.Field, "problems": pe.Problems, "plan": res.Plan,
		})
	}
	if err != nil {
		return h.fail(c, err)
	}
	out := PromoteResponse{Plan: res.Plan}
	if res.Deployment == nil {
		return c.JSON(out)
	}
	d := newDeployment(*res.Deployment, h.environmentName(c, a.ID))
	out.Deployment = &d
	return c.Status(http.StatusAccepted).JSON(out)
}

// PromotionChecks wires what a server has into a promotion's checks (the
// dashboard shares it): the runtime reader, when it implements them,
// inspects images and the source's services, and the secret store lists
// unusable secrets. What is missing is skipped.
func PromotionChecks(runtime any, sec *secrets.Service) service.PromoteOptions {
	var opts service.PromoteOptions
	if ins, ok := runtime.(service.ImageInspector); ok {
		opts.Images = ins
	}
	switch rt := runtime.(type) {
	case service.SourceRuntime:
		opts.Runtime = rt
	case RuntimeReader:
		opts.Runtime = sourceDrift{rt}
	}
	if sec != nil {
		opts.Secrets = secretIssues{sec}
	}
	return opts
}

// secretIssues adapts the secret store to the promotion checks.
type secretIssues struct{ s *secrets.Service }

func (x secretIssues) SecretIssues(ctx context.Context, teamID string, env store.Environment, m *manifest.Manifest) ([]service.SecretIssue, error) {
	problems, err := x.s.Problems(ctx, teamID, env, m)
	if err != nil {
		return nil, err
	}
	out := make([]service.SecretIssue, len(problems))
	for i, p := range problems {
		out[i] = service.SecretIssue{Code: p.Code, Names: p.Names}
	}
	return out, nil
}
