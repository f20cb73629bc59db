package api

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
)

// registerFieldEdits mounts the endpoints that edit one part of the saved
// manifest. Each validates the whole result, saves a revision without
// deploying unless ?deploy=true, and honours If-Match.
func (h *handler) registerFieldEdits(r fiber.Router) {
	write := h.requireScope(auth.AppsWrite)
	r.Put("/applications/:app/variables/:variable", write, h.variableSet)
	r.Delete("/applications/:app/variables/:variable", write, h.variableUnset)
	r.Patch("/applications/:app/services/:service", write, h.serviceUpdate)
	r.Post("/applications/:app/services/:service/rename", write, h.serviceRename)
	r.Post("/applications/:app/services", write, h.serviceAdd)
	r.Delete("/applications/:app/services/:service", write, h.serviceRemove)
	r.Put("/applications/:app/services/:service/files", write, h.fileSet)
	r.Delete("/applications/:app/services/:service/files", write, h.fileRemove)
	r.Put("/applications/:app/routes/:route", write, h.routeSet)
	r.Delete("/applications/:app/routes/:route", write, h.routeRemove)
	r.Put("/applications/:app/jobs/:job", write, h.jobSet)
	r.Delete("/applications/:app/jobs/:job", write, h.jobRemove)
	r.Put("/applications/:app/exports/:service", write, h.exportSet)
	r.Delete("/applications/:app/exports/:service", write, h.exportRemove)
	r.Put("/applications/:app/imports/:application/:service", write, h.importSet)
	r.Delete("/applications/:app/imports/:application/:service", write, h.importRemove)
	r.Put("/applications/:app/generated-secrets", write, h.generatedSecretsReplace)
	r.Put("/applications/:app/generated-secrets/:name", write, h.generatedSecretDeclare)
	r.Delete("/applications/:app/generated-secrets/:name", write, h.generatedSecretUndeclare)
	r.Put("/applications/:app/environments/:env/visibility", write, h.environmentVisibility)
	r.Put("/applications/:app/environments/:env/rollback", write, h.environmentRollback)
	r.Post("/applications/:app/rename", write, h.applicationRename)
	// Not a manifest edit, but registered with the environment settings.
	h.registerEnvironmentTelemetry(r)
}

// FieldEditResponse answers every field edit.
type FieldEditResponse struct {
	Revision int64 `json:"revision"`
	// Unchanged is true when the edit changed nothing; no revision was saved.
	Unchanged           bool         `json:"unchanged"`
	CreatedEnvironments []string     `json:"created_environments"`
	Warnings            []FieldError `json:"warnings"`
	Deployments         []Deployment `json:"deployments"`
}

// ifMatch reads If-Match, the revision the client edited; nil when absent.
func ifMatch(c *fiber.Ctx) (*int64, *badBody) {
	m := strings.Trim(strings.TrimSpace(c.Get(fiber.HeaderIfMatch)), `"`)
	if m == "" {
		return nil, nil
	}
	rev, err := strconv.ParseInt(m, 10, 64)
	if err != nil || rev < 0 {
		return nil, &badBody{"if_match_invalid", "If-Match must be the revision number you edited, like If-Match: 3", map[string]any{"field": "If-Match"}}
	}
	return &rev, nil
}

// editBuilder builds a field edit once the application is resolved (so a
// bad body for another team's application still answers 404): it returns
// the edit, or a refused body, or an error.
type editBuilder func(appID string) (func(*manifest.Manifest) error, *badBody, error)

// runEdit resolves the application and If-Match, builds the edit, applies
// it through service.EditManifest and answers.
func (h *handler) runEdit(c *fiber.Ctx, build editBuilder) error {
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	expected, bad := ifMatch(c)
	if bad != nil {
		return bad.write(c)
	}
	edit, bad, err := build(a.ID)
	if bad != nil {
		return bad.write(c)
	}
	if err != nil {
		return h.failEdit(c, err)
	}
	res, err := service.EditManifest(c.UserContext(), h.store, callerOf(c).actor(), h.enqueue, a.ID, expected, edit, c.QueryBool("deploy"))
	if err != nil {
		return h.failEdit(c, err)
	}
	out := FieldEditResponse{
		Revision: res.Revision.Revision, Unchanged: res.Unchanged,
		CreatedEnvironments: nonNil(res.CreatedEnvironments),
		Warnings:            newFieldErrors(res.Warnings), Deployments: []Deployment{},
	}
	names, err := h.environmentNames(c.UserContext(), a.TeamID, a.ID)
	if err != nil {
		return h.fail(c, err)
	}
	for _, d := range res.Deployments {
		out.Deployments = append(out.Deployments, newDeployment(d, names[d.EnvironmentID]))
	}
	return c.JSON(out)
}

// failEdit answers an edit's error: an invalid result lists every problem,
// a lost race is 409, an unknown service or variable is 404.
func (h *handler) failEdit(c *fiber.Ctx, err error) error {
	var me *service.ManifestError
	if errors.As(err, &me) {
		return WriteError(c, http.StatusUnprocessableEntity, "manifest_validation_failed", me.Error(),
			map[string]any{"errors": newFieldErrors(me.Errors)})
	}
	var ie *service.InputError
	if errors.As(err, &ie) {
		switch ie.Code {
		case "generation_conflict":
			return WriteError(c, http.StatusConflict, ie.Code, ie.Message, map[string]any{"field": "If-Match"})
		case "service_unknown", "variable_unknown", "environment_unknown",
			"route_unknown", "job_unknown", "file_unknown", "export_unknown", "import_unknown",
			"secret_declaration_unknown":
			return WriteError(c, http.StatusNotFound, ie.Code, ie.Message, map[string]any{"field": ie.Field})
		}
	}
	return h.fail(c, err)
}
