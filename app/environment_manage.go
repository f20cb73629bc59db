package app

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/views/page"
)

// This file answers the Environments tab's branch/sync and delete forms,
// through the same service functions as env branch, env sync (together, in
// one transaction) and env delete.

// environmentManage says, per environment, which of those controls the
// saved manifest m leaves editable.
func environmentManage(m *manifest.Manifest, envs []page.EnvironmentView) map[string]page.EnvironmentManage {
	out := make(map[string]page.EnvironmentManage, len(envs))
	repo := m != nil && m.Spec.Manifest != nil && m.Spec.Manifest.Repository != nil
	for _, e := range envs {
		em := page.EnvironmentManage{Repository: repo}
		if service.BlockSetsSource(m, e.Name) {
			em.SourceLocked = fmt.Sprintf("[spec.environments.%s] in the manifest sets its source; change it there (environment_declared).", e.Name)
		}
		if m != nil {
			if _, ok := m.Spec.Environments[e.Name]; ok {
				em.DeleteLocked = fmt.Sprintf("The manifest declares %s: remove [spec.environments.%s] from it and save to delete it (environment_declared).", e.Name, e.Name)
				em.RenameLocked = fmt.Sprintf("The manifest declares %s: rename [spec.environments.%s] in it and save to rename it (environment_declared).", e.Name, e.Name)
			}
		}
		out[e.Name] = em
	}
	return out
}

// environmentBranchUpdate sets the branch an environment of a
// repository-backed application reads and whether pushes deploy it, in one
// save: a refusal of either leaves both as they were.
func (h *handler) environmentBranchUpdate(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "environments")
	if err != nil {
		return err
	}
	env := c.Params("environment")
	sync := c.FormValue("sync") == "on"
	// Sync deploys what moved since the last deployment at its next
	// listing: asking for it is deploying.
	if role := visitorOf(c).role(); sync && !role.Has(auth.AppsDeploy) {
		return fiber.NewError(http.StatusForbidden, fmt.Sprintf("Your role (%s) does not allow turning sync on: it needs the %s permission.", role, auth.AppsDeploy))
	}
	_, err = service.SetEnvironmentBranchSync(c.UserContext(), h.store, visitorOf(c).actor(), a.ID, env, strings.TrimSpace(c.FormValue("branch")), sync)
	if msg, ok := editErrorMessage(err); ok {
		return h.showEnvironments(c, a, header, map[string]string{"branch:" + env: msg}, "", 0)
	}
	if err != nil {
		return err
	}
	return h.done(c, "Branch and sync of "+env+" saved; the next deployment reads them.", "/applications/"+a.ID+"/environments",
		func(notice string) error { return h.showEnvironments(c, a, header, nil, notice, 0) })
}

// environmentDelete deletes an environment once the visitor typed its
// name; the teardown is queued and its named volumes are retained.
func (h *handler) environmentDelete(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "environments")
	if err != nil {
		return err
	}
	env := c.Params("environment")
	if strings.TrimSpace(c.FormValue("confirm")) != env {
		err = &service.InputError{Field: "confirm", Code: "confirmation_mismatch", Message: fmt.Sprintf("type the environment's name, %s, exactly", env)}
	} else {
		_, err = service.DeleteEnvironment(c.UserContext(), h.store, visitorOf(c).actor(), h.enqueue, a.ID, env)
	}
	if msg, ok := editErrorMessage(err); ok {
		return h.showEnvironments(c, a, header, map[string]string{"delete:" + env: msg}, "", 0)
	}
	if err != nil {
		return err
	}
	return h.done(c, "Environment "+env+" deleted; its services are being removed. Named volumes are retained.", "/applications/"+a.ID+"/environments",
		func(notice string) error { return h.showEnvironments(c, a, header, nil, notice, 0) })
}
