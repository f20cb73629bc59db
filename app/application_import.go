package app

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/manifest/importer"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// importDialects are the choices of the page's dialect picker.
var importDialects = append([]string{importer.Auto}, importer.Dialects...)

// applicationImportShow is the empty "Import from…" page.
func (h *handler) applicationImportShow(c *fiber.Ctx) error {
	return h.render(c, http.StatusOK, "Import an application", page.ApplicationImport(page.ImportView{Dialects: importDialects, From: importer.Auto}))
}

// applicationImport translates the submitted file and shows the native
// manifest with every diagnostic; with intent=create and a faithful
// translation it saves the manifest, creating the application. It is a plain
// form post, so it works without JavaScript.
func (h *handler) applicationImport(c *fiber.Ctx) error {
	v := visitorOf(c)
	create := c.FormValue("intent") == "create"
	if create && !slices.Contains(auth.ScopesOf(v.role()), auth.AppsWrite) {
		return fiber.NewError(http.StatusForbidden, fmt.Sprintf("Your role (%s) does not allow creating applications: it needs the %s permission.", v.role(), auth.AppsWrite))
	}
	view := page.ImportView{
		Dialects: importDialects, From: c.FormValue("from", importer.Auto), Source: c.FormValue("source"),
		Name: strings.TrimSpace(c.FormValue("name")), Repository: strings.TrimSpace(c.FormValue("repository")),
		Branch: strings.TrimSpace(c.FormValue("branch")), ManifestPath: strings.TrimSpace(c.FormValue("manifest_path")),
		Domain: strings.TrimSpace(c.FormValue("domain")),
	}
	filename := ""
	if fh, err := c.FormFile("source_file"); err == nil && fh.Size > 0 {
		file, err := fh.Open()
		if err != nil {
			return fmt.Errorf("open uploaded source_file: %w", err)
		}
		defer file.Close()
		b, err := io.ReadAll(io.LimitReader(file, importer.MaxBytes+1))
		if err != nil {
			return fmt.Errorf("read uploaded source_file: %w", err)
		}
		view.Source, filename = string(b), fh.Filename
	}
	// Browsers send textarea lines with CRLF; diagnostics count LF lines.
	view.Source = strings.ReplaceAll(view.Source, "\r\n", "\n")
	fail := func(msg string) error {
		view.FormError = msg
		return h.render(c, http.StatusUnprocessableEntity, "Import an application", page.ApplicationImport(view))
	}
	switch {
	case strings.TrimSpace(view.Source) == "":
		return fail("Paste the file to import, or upload it (import_empty).")
	case len(view.Source) > importer.MaxBytes:
		return fail(fmt.Sprintf("The file is larger than %d bytes (import_too_large).", importer.MaxBytes))
	case !slices.Contains(importDialects, view.From):
		return fail(fmt.Sprintf("Source platform %q is not one of %s (import_dialect_unknown).", view.From, strings.Join(importDialects, ", ")))
	}
	dialect := view.From
	if dialect == importer.Auto {
		var err error
		if dialect, err = importer.Detect([]byte(view.Source), filename); err != nil {
			return fail("Could not tell which platform the file is for; choose the source platform (import_dialect_undetected).")
		}
	}
	res, text, err := api.Translate(dialect, []byte(view.Source), "toml", importer.Options{
		Name: view.Name, Repository: view.Repository, Branch: view.Branch, ManifestPath: view.ManifestPath,
		Domain: view.Domain, Filename: filename,
	})
	if err != nil {
		return err
	}
	view.Translated, view.Dialect, view.Manifest, view.Valid = true, res.Dialect, res.Manifest, res.Valid
	for _, d := range res.Diagnostics {
		view.Diagnostics = append(view.Diagnostics, page.ImportDiagnostic(d))
	}
	if !create {
		return h.render(c, http.StatusOK, "Import an application", page.ApplicationImport(view))
	}
	if !res.Valid {
		return fail("The application was not created: some fields could not be translated faithfully (import_failed).")
	}
	// "Create" must not quietly replace the manifest of an application that
	// already has the name; the API's apply=true updates it on purpose.
	name := manifestName(text)
	if _, err := h.store.GetApplicationByName(c.UserContext(), v.current.Team.ID, name); err == nil {
		return fail(fmt.Sprintf("An application named %q already exists; enter another application name (application_name_taken).", name))
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	saved, err := service.ApplyManifest(c.UserContext(), h.store, v.actor(), h.enqueue, text, service.ApplyOptions{Format: "toml", AllowFileURLs: h.fileURLs})
	if errs, ok := manifestErrorViews(err); ok {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Path + ": " + e.Message
		}
		return fail("The application was not created: " + strings.Join(msgs, "; "))
	}
	var ie *service.InputError
	if errors.As(err, &ie) {
		return fail(ie.Message + " (" + ie.Code + ")")
	}
	if err != nil {
		return err
	}
	names, err := h.environmentNames(c.UserContext(), saved.Application.TeamID, saved.Application.ID)
	if err != nil {
		return err
	}
	h.flashOK(c, "Imported from "+page.DialectLabel(view.Dialect)+". "+saveMessage(saved, names))
	return redirect(c, "/applications/"+saved.Application.ID)
}

// manifestName is metadata.name of a manifest the importer produced (so it
// decodes).
func manifestName(text []byte) string {
	m, err := manifest.Decode(text, "toml")
	if err != nil {
		return ""
	}
	return m.Metadata.Name
}
