package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
)

// registerEnvironmentBranch mounts PUT .../environments/{env}/branch and
// .../sync.
func (h *handler) registerEnvironmentBranch(r fiber.Router) {
	r.Put("/applications/:app/environments/:env/branch", h.requireScope(auth.AppsWrite), h.environmentBranch)
	r.Put("/applications/:app/environments/:env/sync", h.requireScope(auth.AppsWrite), h.environmentSync)
}

// BranchRequest is the body of PUT .../environments/{env}/branch: the
// branch a repository-backed environment reads, and optionally a pinned
// commit ("" follows the branch head).
type BranchRequest struct {
	Branch string `json:"branch"`
	Commit string `json:"commit,omitempty"`
}

// EnvironmentBranch is an environment's ref after a change.
type EnvironmentBranch struct {
	Environment string `json:"environment"`
	Branch      string `json:"branch"`
	Commit      string `json:"commit"`
}

// environmentBranch sets the branch (and pinned commit) an environment
// reads; it deploys nothing.
func (h *handler) environmentBranch(c *fiber.Ctx) error {
	// The application first: another team's is 404 whatever the body.
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	var req BranchRequest
	if bad := decode(c.Body(), &req); bad != nil {
		return bad.write(c)
	}
	env, err := service.SetEnvironmentBranch(c.UserContext(), h.store, callerOf(c).actor(), a.ID, h.environmentName(c, a.ID), req.Branch, req.Commit)
	if err != nil {
		return h.fail(c, err)
	}
	return c.JSON(EnvironmentBranch{Environment: env.Name, Branch: env.Branch, Commit: env.Commit})
}

// DeployRequest is the optional body of POST .../environments/{env}/deploy:
// a one-off branch or commit a repository-backed deployment reads.
type DeployRequest struct {
	Branch string `json:"branch,omitempty"`
	Commit string `json:"commit,omitempty"`
}

// SyncRequest is the body of PUT .../environments/{env}/sync.
type SyncRequest struct {
	// Sync turns deploying the followed branch's new heads on or off.
	Sync bool `json:"sync"`
}

// EnvironmentSync is an environment's sync setting after a change.
type EnvironmentSync struct {
	Environment string `json:"environment"`
	Sync        bool   `json:"sync"`
}

// environmentSync turns sync of a repository-backed environment on or
// off; it deploys nothing.
func (h *handler) environmentSync(c *fiber.Ctx) error {
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	var req SyncRequest
	if bad := decode(c.Body(), &req); bad != nil {
		return bad.write(c)
	}
	// Sync deploys what moved since the last deployment at its next
	// listing: asking for it is deploying.
	if req.Sync && !permitted(c, auth.AppsDeploy) {
		return denyScope(c, auth.AppsDeploy)
	}
	env, err := service.SetEnvironmentSync(c.UserContext(), h.store, callerOf(c).actor(), a.ID, h.environmentName(c, a.ID), req.Sync)
	if err != nil {
		return h.fail(c, err)
	}
	return c.JSON(EnvironmentSync{Environment: env.Name, Sync: env.Sync})
}
