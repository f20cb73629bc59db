package app

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/savedmanifest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// This file builds the Environments tab and answers its edits (variables
// and environment settings), which all go through service.EditManifest.

// environmentsTab loads the tab; errs and notice come from an edit.
func (h *handler) environmentsTab(c *fiber.Ctx, a store.Application, errs map[string]string, notice string) (page.EnvironmentsTab, error) {
	p, err := h.environmentPage(c, a, "environments")
	if err != nil {
		return page.EnvironmentsTab{}, err
	}
	envs := p.envs
	t := page.EnvironmentsTab{Envs: envs, Errors: errs, Notice: notice}
	m, _, err := savedmanifest.CurrentLenient(c.UserContext(), h.store, a.TeamID, a.ID)
	if err != nil {
		return t, err
	}
	t.Manage = environmentManage(m, envs)
	if m != nil && m.Spec.Manifest != nil && m.Spec.Manifest.Repository != nil {
		t.Create = page.EnvironmentCreate{Repository: true, DefaultBranch: m.Spec.Manifest.Repository.Branch}
	}
	if m == nil {
		return t, nil
	}
	uses := manifest.VariableUses(m)
	t.Create.HostVariables = hostVariables(uses)
	t.Create.LiteralHostnames = service.LiteralHostnames(m)
	t.Scopes = append(t.Scopes, page.VariableScope{Key: "", Label: "Defaults", Hint: "Used by every environment and preview that sets no value of its own.", Rows: variableRows(m.Spec.Variables, uses)})
	for _, e := range envs {
		t.Scopes = append(t.Scopes, page.VariableScope{Key: "env:" + e.Name, Label: e.Name, Rows: variableRows(m.Spec.Environments[e.Name].Variables, uses)})
	}
	var previewVars map[string]manifest.Value
	if m.Spec.Previews != nil {
		previewVars = m.Spec.Previews.Variables
		t.Previews = m.Spec.Previews.Visibility
	}
	t.Scopes = append(t.Scopes, page.VariableScope{Key: "previews", Label: "Every preview", Hint: "Previews use these over the defaults.", Rows: variableRows(previewVars, uses)})
	for _, svc := range m.Spec.Services {
		t.Services = append(t.Services, page.ServiceEnvironment{Service: svc.Name, Text: service.FormatDotenv(svc.Environment)})
	}
	for i := range t.Scopes {
		t.Scopes[i].Error = errs["vars:"+t.Scopes[i].Key]
	}
	return t, nil
}

// hostVariables are the variables a route's hostname references, sorted.
func hostVariables(uses map[string][]string) []string {
	var out []string
	for name, paths := range uses {
		if slices.ContainsFunc(paths, func(p string) bool {
			return strings.HasPrefix(p, "spec.routes[") && strings.HasSuffix(p, "].hostname")
		}) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func variableRows(vars map[string]manifest.Value, uses map[string][]string) []page.VariableRow {
	rows := make([]page.VariableRow, 0, len(vars))
	for name, v := range vars {
		typ := "text"
		switch v.Interface().(type) {
		case int64:
			typ = "integer"
		case bool:
			typ = "boolean"
		}
		rows = append(rows, page.VariableRow{Name: name, Value: v.String(), Type: typ, UsedBy: uses[name]})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	return rows
}

// editEnvironments applies edit to the saved manifest (based on the
// revision the form showed) and shows the Environments tab again: with the
// error at errKey when refused, else with notice.
func (h *handler) editEnvironments(c *fiber.Ctx, a store.Application, header page.AppHeader, errKey string, edit func(*manifest.Manifest) error, buildErr error, notice string) error {
	return h.editManifestTab(c, a, "environments", edit, buildErr, notice, func(errMsg, notice string, revision int64) error {
		var errs map[string]string
		if errMsg != "" {
			errs = map[string]string{errKey: errMsg}
		}
		return h.showEnvironments(c, a, header, errs, notice, revision)
	})
}

// showEnvironments renders the Environments tab; revision, when not 0,
// is the one an edit just saved.
func (h *handler) showEnvironments(c *fiber.Ctx, a store.Application, header page.AppHeader, errs map[string]string, notice string, revision int64) error {
	t, err := h.environmentsTab(c, a, errs, notice)
	if err != nil {
		return err
	}
	return h.showEnvironmentsTab(c, a, header, t, errs != nil, revision)
}

// showEnvironmentsTab renders t; refused says a form's edit was refused.
func (h *handler) showEnvironmentsTab(c *fiber.Ctx, a store.Application, header page.AppHeader, t page.EnvironmentsTab, refused bool, revision int64) error {
	if revision > 0 {
		header.Revision = revision
		for i := range header.Envs {
			header.Envs[i].Pending = revision > header.Envs[i].Deployed
		}
	}
	status := http.StatusOK
	if refused {
		status = formErrorStatus(c)
	}
	return h.render(c, status, a.Name+" · Environments", page.ApplicationEnvironments(header, t))
}

// editManifestTab applies edit to the saved manifest (based on the
// revision the form showed) and shows the application's tab again through
// show: with the refusal's message, else with notice and the new revision.
// A plain form post that worked is redirected (post-redirect-get).
func (h *handler) editManifestTab(c *fiber.Ctx, a store.Application, tab string, edit func(*manifest.Manifest) error, buildErr error, notice string, show func(errMsg, notice string, revision int64) error) error {
	var res service.ApplyResult
	err := buildErr
	if err == nil {
		res, err = service.EditManifest(c.UserContext(), h.store, visitorOf(c).actor(), h.enqueue, a.ID, formRevision(c), edit, false)
	}
	if msg, ok := editErrorMessage(err); ok {
		return show(msg, "", 0)
	}
	if err != nil {
		return err
	}
	if res.Unchanged {
		notice = "Nothing changed: the manifest already says so."
	} else {
		notice += fmt.Sprintf(" Saved as revision %d; it is not deployed yet: use Deploy at the top of the page to apply it.", res.Revision.Revision)
	}
	return h.done(c, notice, "/applications/"+a.ID+"/"+tab, func(notice string) error { return show("", notice, res.Revision.Revision) })
}

// formRevision is the revision the form was rendered from, so an edit
// never silently overwrites a save made meanwhile; nil when absent.
func formRevision(c *fiber.Ctx) *int64 {
	var n int64
	if _, err := fmt.Sscan(c.FormValue("revision"), &n); err != nil || n <= 0 {
		return nil
	}
	return &n
}

// editErrorMessage turns a refused edit into the line shown beside the
// form: every manifest error with its field path and code.
func editErrorMessage(err error) (string, bool) {
	if errs, ok := manifestErrorViews(err); ok {
		parts := make([]string, len(errs))
		for i, e := range errs {
			parts[i] = fmt.Sprintf("%s: %s (%s)", e.Path, e.Message, e.Code)
		}
		return strings.Join(parts, "; "), true
	}
	var ie *service.InputError
	if errors.As(err, &ie) {
		return fmt.Sprintf("%s: %s (%s)", ie.Field, ie.Message, ie.Code), true
	}
	var pe *service.PermissionError
	if errors.As(err, &pe) {
		return pe.Message + " (permission_denied)", true
	}
	return "", false
}

// formErrorStatus is 422 for a plain form post; htmx only swaps 2xx
// answers in, so its requests get 200 with the error inline.
func formErrorStatus(c *fiber.Ctx) int {
	if isFragment(c) {
		return http.StatusOK
	}
	return http.StatusUnprocessableEntity
}
