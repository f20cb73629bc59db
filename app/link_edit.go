package app

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/savedmanifest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// This file answers the Links tab's forms through the field edits of
// PUT/DELETE /api/v1/applications/{id}/exports and /imports.

// exportSet exports a service, or replaces who may import it.
func (h *handler) exportSet(c *fiber.Ctx) error {
	var apps []string
	for _, name := range strings.Split(c.FormValue("applications"), ",") {
		if name = strings.TrimSpace(name); name != "" {
			apps = append(apps, name)
		}
	}
	svc := strings.TrimSpace(c.FormValue("service"))
	return h.editLinks(c, "exports", service.SetExport(manifest.Export{Service: svc, Applications: apps, Previews: c.FormValue("previews") == "true"}), svc+" exported.")
}

// exportRemove stops exporting a service.
func (h *handler) exportRemove(c *fiber.Ctx) error {
	svc := c.FormValue("service")
	return h.editLinks(c, "exports", service.RemoveExport(svc), svc+" no longer exported.")
}

// importSet imports another application's exported service.
func (h *handler) importSet(c *fiber.Ctx) error {
	im := manifest.Import{Application: strings.TrimSpace(c.FormValue("application")), Service: strings.TrimSpace(c.FormValue("service")), Environment: strings.TrimSpace(c.FormValue("environment"))}
	return h.editLinks(c, "imports", service.SetImport(im), im.Application+"/"+im.Service+" imported.")
}

// importRemove removes an import.
func (h *handler) importRemove(c *fiber.Ctx) error {
	app, svc := c.FormValue("application"), c.FormValue("service")
	return h.editLinks(c, "imports", service.RemoveImport(app, svc), app+"/"+svc+" no longer imported.")
}

// editLinks saves edit as a new revision and shows the Links tab, with
// the refusal under the form of kind (exports or imports).
func (h *handler) editLinks(c *fiber.Ctx, kind string, edit func(*manifest.Manifest) error, notice string) error {
	a, header, err := h.loadApplication(c, "links")
	if err != nil {
		return err
	}
	return h.editManifestTab(c, a, "links", edit, nil, notice, func(errMsg, notice string, revision int64) error {
		t, err := h.linksTab(c, a)
		if err != nil {
			return err
		}
		t.Notice = notice
		status := fiber.StatusOK
		if errMsg != "" {
			t.Errors = map[string]string{kind: errMsg}
			status = formErrorStatus(c)
		}
		if revision > 0 {
			header.Revision = revision
		}
		return h.render(c, status, a.Name+" · Links", page.ApplicationLinks(header, t))
	})
}

// linksTab reads the saved manifest's exports and imports.
func (h *handler) linksTab(c *fiber.Ctx, a store.Application) (page.LinksTab, error) {
	var t page.LinksTab
	m, _, err := savedmanifest.CurrentLenient(c.UserContext(), h.store, a.TeamID, a.ID)
	if err != nil || m == nil {
		return t, err
	}
	for _, e := range m.Spec.Exports {
		t.Exports = append(t.Exports, page.ExportRow{Service: e.Service, Applications: e.Applications, Previews: e.Previews})
	}
	for _, im := range m.Spec.Imports {
		t.Imports = append(t.Imports, page.ImportRow{Application: im.Application, Service: im.Service, Environment: im.Environment})
	}
	return t, nil
}
