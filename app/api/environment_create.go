package api

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
)

func (h *handler) registerEnvironmentCreate(r fiber.Router) {
	r.Post("/applications/:app/environments", h.requireScope(auth.AppsWrite), h.environmentCreate)
	r.Post("/applications/:app/environments/:env/rename", h.requireScope(auth.AppsWrite), h.environmentRename)
}

// EnvironmentCreateRequest is POST /applications/{app}/environments: an
// environment the manifest does not declare. Branch is the branch a
// repository-backed environment follows ("" follows spec.manifest's).
// Hostname is the environment's own hostname for the manifest's one
// route with a literal hostname; "" derives one (notes.example.com:
// notes-NAME.example.com) for each such route.
type EnvironmentCreateRequest struct {
	Name     string `json:"name"`
	Branch   string `json:"branch,omitempty"`
	Hostname string `json:"hostname,omitempty"`
}

// EnvironmentCreated answers a create: the environment and, when the
// manifest's routes named literal hostnames (which every environment
// would render alike), the hostnames it got of its own, each through a
// variable whose default keeps the other environments' hostname.
type EnvironmentCreated struct {
	Environment
	Hostnames []service.OwnHostname `json:"hostnames"`
}

// EnvironmentRenameRequest is POST .../environments/{env}/rename.
type EnvironmentRenameRequest struct {
	Name string `json:"name"`
}

// EnvironmentRenamed answers a rename: the environment keeps its id,
// deployments and running services.
type EnvironmentRenamed struct {
	Environment Environment `json:"environment"`
	OldName     string      `json:"old_name"`
}

func newEnvironment(e store.Environment) Environment {
	return Environment{ID: e.ID, Name: e.Name, Kind: string(e.Kind), Branch: e.Branch, PromoteFrom: e.PromoteFrom, Rollback: e.Rollback, CreatedAt: e.CreatedAt}
}

// environmentCreate creates an undeclared environment; it deploys nothing.
func (h *handler) environmentCreate(c *fiber.Ctx) error {
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	var req EnvironmentCreateRequest
	if bad := decode(c.Body(), &req); bad != nil {
		return bad.write(c)
	}
	env, err := service.CreateEnvironment(c.UserContext(), h.store, callerOf(c).actor(), a.ID, req.Name, service.CreateOptions{Branch: req.Branch, Hostname: req.Hostname})
	if err != nil {
		return h.fail(c, err)
	}
	own, err := service.GiveOwnHostnames(c.UserContext(), h.store, callerOf(c).actor(), h.enqueue, a.ID, env.Name, req.Hostname)
	if err != nil {
		return h.failEdit(c, err)
	}
	return c.Status(http.StatusCreated).JSON(EnvironmentCreated{Environment: newEnvironment(env), Hostnames: append([]service.OwnHostname{}, own...)})
}

// environmentRename renames an undeclared environment; nothing is
// redeployed.
func (h *handler) environmentRename(c *fiber.Ctx) error {
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	var req EnvironmentRenameRequest
	if bad := decode(c.Body(), &req); bad != nil {
		return bad.write(c)
	}
	old := h.environmentName(c, a.ID)
	env, err := service.RenameEnvironment(c.UserContext(), h.store, callerOf(c).actor(), a.ID, old, req.Name)
	if err != nil {
		return h.fail(c, err)
	}
	return c.JSON(EnvironmentRenamed{Environment: newEnvironment(env), OldName: old})
}
