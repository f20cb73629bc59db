package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// previewDelete deletes a preview: through the preview service when the
// server runs one (which removes its volumes too), else at once, as an
// idle environment is deleted (never through the environment commands).
func (h *handler) previewDelete(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "previews")
	if err != nil {
		return err
	}
	ctx, actor, slug := c.UserContext(), visitorOf(c).actor(), c.Params("slug")
	if h.previews != nil {
		_, err = h.previews.Delete(ctx, actor, h.enqueue, a.ID, slug)
	} else {
		_, err = service.DeletePreviewNow(ctx, h.store, actor, h.enqueue, a.ID, slug)
	}
	if msg, ok := editErrorMessage(err); ok {
		return h.previewRowError(c, a, header, slug, msg)
	}
	if err != nil {
		return err
	}
	if !isFragment(c) {
		return redirect(c, "/applications/"+a.ID+"/previews")
	}
	t, err := h.previewsTab(c, a, "Preview "+slug+" is being deleted.")
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, a.Name+" · Previews", page.ApplicationPreviews(header, t))
}

// previewRowError shows the tab with msg beside the preview's buttons.
func (h *handler) previewRowError(c *fiber.Ctx, a store.Application, header page.AppHeader, slug, msg string) error {
	t, err := h.previewsTab(c, a, "")
	if err != nil {
		return err
	}
	t.RowErrors[slug] = msg
	return h.render(c, formErrorStatus(c), a.Name+" · Previews", page.ApplicationPreviews(header, t))
}
