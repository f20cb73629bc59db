package app

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/views/page"
)

// previewCreate creates the preview of a branch (and slot), deploying it
// unless the form says not to.
func (h *handler) previewCreate(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "previews")
	if err != nil {
		return err
	}
	if h.previews == nil {
		return fiber.NewError(http.StatusServiceUnavailable, "This server does not run previews (previews_unavailable).")
	}
	p, err := h.previews.Create(c.UserContext(), visitorOf(c).actor(), h.enqueue, a.ID, service.PreviewRequest{
		Branch: strings.TrimSpace(c.FormValue("branch")), Slot: strings.TrimSpace(c.FormValue("slot")), Deploy: c.FormValue("deploy") == "true",
	})
	if msg, ok := editErrorMessage(err); ok {
		t, lerr := h.previewsTab(c, a, "")
		if lerr != nil {
			return lerr
		}
		t.Error = msg
		return h.render(c, formErrorStatus(c), a.Name+" · Previews", page.ApplicationPreviews(header, t))
	}
	if err != nil {
		return err
	}
	if p.Deployment != nil {
		return redirect(c, "/applications/"+a.ID+"/deployments/"+p.Deployment.ID)
	}
	return redirect(c, "/applications/"+a.ID+"/previews")
}
