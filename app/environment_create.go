package app

import (
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/views"
)

// This file answers the Environments tab's create and rename forms,
// through the same service functions as env create and env rename.

// environmentCreate creates an environment the manifest does not declare;
// for a repository-backed application, following the branch the form names
// (by default the one spec.manifest names).
func (h *handler) environmentCreate(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "environments")
	if err != nil {
		return err
	}
	env, err := service.CreateEnvironment(c.UserContext(), h.store, visitorOf(c).actor(), a.ID, c.FormValue("name"), service.CreateOptions{Branch: c.FormValue("branch"), Hostname: c.FormValue("hostname")})
	if msg, ok := editErrorMessage(err); ok {
		return h.showEnvironments(c, a, header, map[string]string{"create": msg}, "", 0)
	}
	if err != nil {
		return err
	}
	msg := "Environment " + env.Name + " created; nothing runs in it yet: deploy it to start its services."
	set, err := h.environmentVariables(c, a.ID, env.Name)
	if errMsg, ok := editErrorMessage(err); ok {
		// The environment exists; say so, and why its values are not saved.
		return h.showEnvironments(c, a, header, map[string]string{"create": "Environment " + env.Name + " created, but its variables were not saved: " + errMsg}, "", 0)
	}
	if err != nil {
		return err
	}
	own, err := service.GiveOwnHostnames(c.UserContext(), h.store, visitorOf(c).actor(), h.enqueue, a.ID, env.Name, c.FormValue("hostname"))
	if errMsg, ok := editErrorMessage(err); ok {
		return h.showEnvironments(c, a, header, map[string]string{"create": "Environment " + env.Name + " created, but it got no hostname of its own: " + errMsg}, "", 0)
	}
	if err != nil {
		return err
	}
	for _, o := range own {
		set = append(set, "hostname "+o.Hostname+" (vars."+o.Variable+"; the others keep "+o.Shared+")")
	}
	if len(set) > 0 {
		msg = "Environment " + env.Name + " created with its own " + strings.Join(set, ", ") + " (a new manifest revision); nothing runs in it yet: deploy it to start its services."
	}
	clashes, err := service.HostnameClashes(c.UserContext(), h.store, visitorOf(c).actor(), a.ID, env.Name)
	if err != nil {
		return err
	}
	if len(clashes) > 0 {
		msg = "Environment " + env.Name + " created, but deploying it would fail (hostname_conflict): " + strings.Join(clashes, "; ") + "."
		if !isFragment(c) {
			h.setFlash(c, views.Flash{Kind: "error", Message: msg})
			return redirect(c, "/applications/"+a.ID+"/environments")
		}
		return h.showEnvironments(c, a, header, map[string]string{"create": msg}, "", 0)
	}
	return h.done(c, msg, "/applications/"+a.ID+"/environments",
		func(notice string) error { return h.showEnvironments(c, a, header, nil, notice, 0) })
}

// environmentVariables saves the create form's var.<name> values as the
// new environment's variables, in one manifest revision, and returns the
// names it set (none when every field was left empty).
func (h *handler) environmentVariables(c *fiber.Ctx, appID, env string) ([]string, error) {
	values := map[string]string{}
	c.Context().PostArgs().VisitAll(func(k, v []byte) {
		if name, ok := strings.CutPrefix(string(k), "var."); ok && strings.TrimSpace(string(v)) != "" {
			values[name] = strings.TrimSpace(string(v))
		}
	})
	if len(values) == 0 {
		return nil, nil
	}
	var names []string
	var edits []func(*manifest.Manifest) error
	for name, v := range values {
		names = append(names, name)
		value := manifest.StringValue(v)
		edit, err := service.EditVariable(c.UserContext(), h.store, visitorOf(c).actor(), appID, service.VariableEdit{Name: name, Environment: env, Value: &value})
		if err != nil {
			return nil, err
		}
		edits = append(edits, edit)
	}
	slices.Sort(names)
	_, err := service.EditManifest(c.UserContext(), h.store, visitorOf(c).actor(), h.enqueue, appID, nil, func(m *manifest.Manifest) error {
		for _, edit := range edits {
			if err := edit(m); err != nil {
				return err
			}
		}
		return nil
	}, false)
	return names, err
}

// environmentRename renames an environment the manifest does not declare,
// keeping what runs for it.
func (h *handler) environmentRename(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "environments")
	if err != nil {
		return err
	}
	old := c.Params("environment")
	env, err := service.RenameEnvironment(c.UserContext(), h.store, visitorOf(c).actor(), a.ID, old, c.FormValue("name"))
	if msg, ok := editErrorMessage(err); ok {
		return h.showEnvironments(c, a, header, map[string]string{"rename:" + old: msg}, "", 0)
	}
	if err != nil {
		return err
	}
	return h.done(c, "Environment "+old+" renamed to "+env.Name+"; its services keep running: deploy it to render the new name.", "/applications/"+a.ID+"/environments",
		func(notice string) error { return h.showEnvironments(c, a, header, nil, notice, 0) })
}
