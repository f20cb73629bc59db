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
	var req PromoteRequest
	if len(c.Body()) > 0 {
		if bad := decode(c.Body(), &req); bad != nil {
			return bad.write(c)
		}
	}
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	opts := service.PromoteOptions{DeploymentID: req.DeploymentID, ReleaseID: req.ReleaseID, Plan: req.Plan}
	// The runtime reader, when it can, also inspects images and the
	// source's services; without it those checks are skipped.
	if ins, ok := h.runtime.(service.ImageInspector); ok {
		opts.Images = ins
	}
	if rt, ok := h.runtime.(service.SourceRuntime); ok {
		opts.Runtime = rt
	}
	if h.secrets != nil {
		opts.Secrets = secretIssues{h.secrets}
	}
	res, err := service.PromoteEnvironment(c.UserContext(), h.store, callerOf(c).actor(), h.enqueue, a.ID, c.Params("env"), opts)
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
	d := newDeployment(*res.Deployment, c.Params("env"))
	out.Deployment = &d
	return c.Status(http.StatusAccepted).JSON(out)
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
