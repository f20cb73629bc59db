package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest/importer"
)

// ImportDiagnostic is one warning or error about a field of the imported
// file; Path names the field in the source dialect, Line is 0 when unknown.
type ImportDiagnostic struct {
	Severity string `json:"severity"`
	Path     string `json:"path"`
	Message  string `json:"message"`
	Line     int    `json:"line"`
}

// ImportResponse is POST /applications/import. Manifest is the native
// manifest text in the requested format, empty when nothing translatable
// was left; Valid is true when the translation is faithful and valid.
type ImportResponse struct {
	Dialect     string             `json:"dialect"`
	Format      string             `json:"format"`
	Manifest    string             `json:"manifest"`
	Diagnostics []ImportDiagnostic `json:"diagnostics"`
	Valid       bool               `json:"valid"`
	// Applied is set when ?apply=true saved the manifest.
	Applied *ImportApplied `json:"applied,omitempty"`
}

// ImportApplied is what ?apply=true saved.
type ImportApplied struct {
	Application Application  `json:"application"`
	Revision    int64        `json:"revision"`
	Created     bool         `json:"created"`
	Unchanged   bool         `json:"unchanged"`
	Warnings    []FieldError `json:"warnings"`
}

// importFailed is the 422 body: the API error envelope, with the whole
// import response beside it so a client shows the diagnostics either way.
type importFailed struct {
	Error
	ImportResponse
}

// applicationImport translates another platform's manifest (the raw body)
// into a native one, and saves it with ?apply=true when the translation is
// faithful. Translating only reads, so it needs apps:read; applying needs
// apps:write as POST /applications/apply does.
func (h *handler) applicationImport(c *fiber.Ctx) error {
	apply := c.QueryBool("apply")
	if apply && !slices.Contains(callerOf(c).scopes, auth.AppsWrite) {
		return WriteError(c, http.StatusForbidden, "permission_denied",
			fmt.Sprintf("apply=true needs the %s permission", auth.AppsWrite), map[string]any{"permission": string(auth.AppsWrite)})
	}
	body := c.Body()
	if len(body) > importer.MaxBytes {
		return WriteError(c, http.StatusRequestEntityTooLarge, "import_too_large",
			fmt.Sprintf("the file is %d bytes; the limit is %d (1 MiB)", len(body), importer.MaxBytes),
			map[string]any{"limit": importer.MaxBytes, "size": len(body)})
	}
	if strings.TrimSpace(string(body)) == "" {
		return WriteError(c, http.StatusBadRequest, "import_empty", "send the file to import as the request body", map[string]any{"field": "body"})
	}
	format := c.Query("format", "toml")
	if format != "toml" && format != "json" {
		return WriteError(c, http.StatusBadRequest, "format_invalid",
			fmt.Sprintf("format %q is neither toml nor json", format), map[string]any{"field": "format"})
	}
	dialect := c.Query("from", importer.Auto)
	if dialect == importer.Auto {
		var err error
		if dialect, err = importer.Detect(body, c.Query("filename")); err != nil {
			return WriteError(c, http.StatusBadRequest, "import_dialect_undetected",
				err.Error()+"; pass from="+strings.Join(importer.Dialects, "|"), map[string]any{"field": "from"})
		}
	} else if !slices.Contains(importer.Dialects, dialect) {
		return WriteError(c, http.StatusBadRequest, "import_dialect_unknown",
			fmt.Sprintf("from %q is not one of %s or auto", dialect, strings.Join(importer.Dialects, ", ")),
			map[string]any{"field": "from", "allowed": append(slices.Clone(importer.Dialects), importer.Auto)})
	}
	res, out, err := Translate(dialect, body, format, importer.Options{
		Name: c.Query("name"), Repository: c.Query("repository"), Branch: c.Query("branch"), ManifestPath: c.Query("manifest_path"),
		Domain: c.Query("domain"), Filename: c.Query("filename"),
	})
	if err != nil {
		return h.fail(c, err)
	}
	if !res.Valid {
		errs := 0
		for _, d := range res.Diagnostics {
			if d.Severity == string(importer.SeverityError) {
				errs++
			}
		}
		return c.Status(http.StatusUnprocessableEntity).JSON(importFailed{
			Error: Error{Code: "import_failed",
				Message: fmt.Sprintf("%d field(s) of the %s file could not be translated faithfully; see diagnostics", errs, dialect),
				Details: map[string]any{"errors": errs}},
			ImportResponse: res,
		})
	}
	if !apply {
		return c.JSON(res)
	}
	saved, err := service.ApplyManifest(c.UserContext(), h.store, callerOf(c).actor(), h.enqueue, out, service.ApplyOptions{Format: format, AllowFileURLs: h.fileURLs})
	if err != nil {
		// The importer validated the manifest already; a failure here is a
		// save-time rule (like a name taken), reported like /apply does.
		return h.failManifest(c, err)
	}
	res.Applied = &ImportApplied{
		Application: newApplication(saved.Application), Revision: saved.Revision.Revision,
		Created: saved.Created, Unchanged: saved.Unchanged, Warnings: newFieldErrors(saved.Warnings),
	}
	status := http.StatusOK
	if saved.Created {
		status = http.StatusCreated
	}
	return c.Status(status).JSON(res)
}

// Translate runs one import of data written in dialect (not auto) and
// encodes the result in format; the dashboard's import page shares it. The
// returned bytes are the manifest text, nil when there is none.
func Translate(dialect string, data []byte, format string, opts importer.Options) (ImportResponse, []byte, error) {
	r, err := importer.Import(dialect, data, opts)
	if err != nil {
		return ImportResponse{}, nil, fmt.Errorf("import %s: %w", dialect, err)
	}
	out := ImportResponse{Dialect: r.Dialect, Format: format, Diagnostics: make([]ImportDiagnostic, len(r.Diagnostics)), Valid: r.OK()}
	for i, d := range r.Diagnostics {
		out.Diagnostics[i] = ImportDiagnostic{Severity: string(d.Severity), Path: d.Path, Message: d.Message, Line: d.Line}
	}
	var text []byte
	if r.Manifest != nil {
		if text, err = importer.Encode(r.Manifest, format); err != nil {
			return ImportResponse{}, nil, err
		}
		out.Manifest = string(text)
	}
	return out, text, nil
}
