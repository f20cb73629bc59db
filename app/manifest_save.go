package app

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/partial"
)

// manifestSave saves the posted manifest as the next revision (creating
// the application on the create form), and deploys it when asked.
func (h *handler) manifestSave(c *fiber.Ctx) error {
	f, err := readManifestForm(c)
	if err != nil {
		return err
	}
	v := visitorOf(c)
	deploy := f.intent == "deploy"
	if deploy && !v.role().Has(auth.AppsDeploy) {
		return fiber.NewError(http.StatusForbidden, fmt.Sprintf("Your role (%s) does not allow deploying: it needs the %s permission.", v.role(), auth.AppsDeploy))
	}
	editor := editorFor(h.viewContext(c), f.applicationID, deref(f.expectedRevision), f.source)
	if f.applicationID == "" {
		// The create form makes a new application; saving over an existing
		// one from there would replace its manifest without showing it.
		if m, _, err := service.DecodeManifest([]byte(f.source), f.format); err == nil {
			existing, err := h.store.GetApplicationByName(c.UserContext(), v.current.Team.ID, m.Metadata.Name)
			if err == nil {
				editor.Errors = []partial.ManifestErrorView{{Path: "metadata.name", Code: "name_taken",
					Message: fmt.Sprintf("an application named %q already exists: change its manifest on its Manifest tab (/applications/%s/manifest), or choose another name", existing.Name, existing.ID)}}
				return h.renderEditor(c, http.StatusUnprocessableEntity, f, editor)
			}
			if !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
	} else {
		// Saving from an application's page must not create or overwrite
		// another application by changing metadata.name.
		a, err := h.store.GetApplication(c.UserContext(), v.current.Team.ID, f.applicationID)
		if err != nil {
			return err
		}
		if m, _, err := service.DecodeManifest([]byte(f.source), f.format); err == nil && m.Metadata.Name != a.Name {
			editor.Errors = []partial.ManifestErrorView{{Path: "metadata.name", Code: "name_mismatch",
				Message: fmt.Sprintf("this is the manifest of %q; metadata.name cannot change here (it is %q)", a.Name, m.Metadata.Name)}}
			return h.renderEditor(c, http.StatusUnprocessableEntity, f, editor)
		}
	}
	res, err := service.ApplyManifest(c.UserContext(), h.store, v.actor(), h.enqueue, []byte(f.source), service.ApplyOptions{
		Format: f.format, ExpectedRevision: f.expectedRevision, Deploy: deploy, AllowFileURLs: h.fileURLs,
	})
	if errs, ok := manifestErrorViews(err); ok {
		editor.Errors = errs
		return h.renderEditor(c, http.StatusUnprocessableEntity, f, editor)
	}
	var ie *service.InputError
	if errors.As(err, &ie) {
		editor.FormError = ie.Message + " (" + ie.Code + ")"
		return h.renderEditor(c, http.StatusUnprocessableEntity, f, editor)
	}
	var pe *service.PermissionError
	if errors.As(err, &pe) {
		editor.FormError = pe.Message + " (permission_denied)"
		return h.renderEditor(c, http.StatusForbidden, f, editor)
	}
	if err != nil {
		return err
	}
	base := "/applications/" + res.Application.ID
	names, err := h.environmentNames(c.UserContext(), res.Application.TeamID, res.Application.ID)
	if err != nil {
		return err
	}
	h.flashOK(c, saveMessage(res, names))
	switch {
	case len(res.Deployments) == 1:
		return redirect(c, base+"/deployments/"+res.Deployments[0].ID)
	case len(res.Deployments) > 1:
		return redirect(c, base+"/deployments")
	case f.applicationID == "":
		return redirect(c, base)
	}
	return redirect(c, base+"/manifest")
}

// saveMessage says what a save did and what comes next.
func saveMessage(res service.ApplyResult, envNames map[string]string) string {
	rev := res.Revision.Revision
	var b strings.Builder
	switch {
	case res.Created:
		fmt.Fprintf(&b, "Created application %s from revision %d.", res.Application.Name, rev)
	case res.Unchanged:
		fmt.Fprintf(&b, "Nothing changed: revision %d already says this.", rev)
	default:
		fmt.Fprintf(&b, "Saved revision %d of %s.", rev, res.Application.Name)
	}
	if len(res.CreatedEnvironments) > 0 {
		fmt.Fprintf(&b, " New %s: %s.", plural(len(res.CreatedEnvironments), "environment", "environments"), strings.Join(res.CreatedEnvironments, ", "))
	}
	var deployed []string
	for _, d := range res.Deployments {
		deployed = append(deployed, envNames[d.EnvironmentID])
	}
	switch {
	case len(deployed) > 0:
		fmt.Fprintf(&b, " Deploying %s: follow it below.", strings.Join(deployed, ", "))
	case !res.Unchanged:
		b.WriteString(" It is not deployed yet: use Deploy at the top of the page to apply it.")
	}
	return b.String()
}

// plural is "1 thing" or "n things".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
