package app

import (
	"context"
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/views"
	"github.com/slipwayhq/slipway/views/page"
	"github.com/slipwayhq/slipway/views/partial"
)

// manifestForm is what the editor posts: the document (typed, or a file
// that wins over the text), its format, and the application it edits ("" on
// the create form) at the revision the author started from.
type manifestForm struct {
	source           string
	format           string
	applicationID    string
	expectedRevision *int64
	intent           string // save or deploy
}

func readManifestForm(c *fiber.Ctx) (manifestForm, error) {
	f := manifestForm{source: c.FormValue("manifest"), applicationID: c.FormValue("application"), intent: c.FormValue("intent")}
	if fh, err := c.FormFile("manifest_file"); err == nil && fh.Size > 0 {
		file, err := fh.Open()
		if err != nil {
			return f, err
		}
		defer file.Close()
		b, err := io.ReadAll(io.LimitReader(file, BodyLimit))
		if err != nil {
			return f, err
		}
		f.source = string(b)
		if strings.EqualFold(path.Ext(fh.Filename), ".json") {
			f.format = "json"
		}
	}
	// Browsers send textarea lines with CRLF; positions count LF lines.
	f.source = strings.ReplaceAll(f.source, "\r\n", "\n")
	if f.format == "" {
		f.format = "toml"
		if strings.HasPrefix(strings.TrimSpace(f.source), "{") {
			f.format = "json"
		}
	}
	if r := c.FormValue("expected_revision"); r != "" {
		n, err := strconv.ParseInt(r, 10, 64)
		if err != nil {
			return f, fiber.NewError(http.StatusBadRequest, "expected_revision must be a revision number")
		}
		f.expectedRevision = &n
	}
	return f, nil
}

// editorFor starts an editor view with what the visitor may do.
func editorFor(ctx context.Context, applicationID string, expected int64, source string) partial.EditorView {
	return partial.EditorView{
		ApplicationID: applicationID, ExpectedRevision: expected, Source: source, Upload: applicationID == "",
		CanSave: views.Can(ctx, "apps:write"), CanDeploy: views.Can(ctx, "apps:write") && views.Can(ctx, "apps:deploy"),
	}
}

// viewContext is the request's context as templates see it, for deciding
// which controls an editor offers before rendering.
func (h *handler) viewContext(c *fiber.Ctx) context.Context {
	return views.WithRequest(c.UserContext(), h.viewRequest(c, visitorOf(c)))
}

// renderEditor shows the editor where it was used: the applications page
// when creating, the application's Manifest tab when editing.
func (h *handler) renderEditor(c *fiber.Ctx, status int, f manifestForm, editor partial.EditorView) error {
	if f.applicationID == "" {
		list, err := h.firstApplicationPage(c)
		if err != nil {
			return err
		}
		return h.render(c, status, "Applications", page.Applications(list, "", nil, editor))
	}
	a, err := h.store.GetApplication(c.UserContext(), visitorOf(c).current.Team.ID, f.applicationID)
	if err != nil {
		return err
	}
	v, err := h.manifestView(c, a, editor)
	if err != nil {
		return err
	}
	header, err := h.appHeader(c.UserContext(), a, "manifest")
	if err != nil {
		return err
	}
	return h.render(c, status, a.Name+" · Manifest", page.ApplicationManifest(header, v))
}
