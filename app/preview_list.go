package app

import (
	"encoding/json"
	"errors"
	"net/http"
	"sort"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/savedmanifest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// previewList is the Previews tab.
func (h *handler) previewList(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "previews")
	if err != nil {
		return err
	}
	t, err := h.previewsTab(c, a, "")
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, a.Name+" · Previews", page.ApplicationPreviews(header, t))
}

// previewsTab loads the application's previews with their latest
// deployments from the store (no repository is read to show the tab).
func (h *handler) previewsTab(c *fiber.Ctx, a store.Application, notice string) (page.PreviewsTab, error) {
	ctx := c.UserContext()
	t := page.PreviewsTab{Notice: notice, RowErrors: map[string]string{}}
	m, _, err := savedmanifest.CurrentLenient(ctx, h.store, a.TeamID, a.ID)
	if err != nil {
		return t, err
	}
	if m != nil {
		t.CanCreate = h.previews != nil && m.Spec.Manifest != nil
		t.Visibility = manifest.DefaultPreviewVisibility
		if m.Spec.Previews != nil && m.Spec.Previews.Visibility != "" {
			t.Visibility = m.Spec.Previews.Visibility
		}
	}
	envs, err := h.store.ListEnvironments(ctx, a.TeamID, a.ID)
	if err != nil {
		return t, err
	}
	for _, e := range envs {
		if e.Kind != store.KindPreview {
			continue
		}
		row := page.PreviewRow{Slug: e.Slug, Branch: e.Branch, Slot: e.Slot, State: "stopped"}
		if row.Slug == "" {
			row.Slug = e.Name
		}
		d, err := h.store.LatestDeployment(ctx, a.TeamID, e.ID)
		switch {
		case err == nil:
			row.Deployment, row.Revision, row.Deployed = d.ID, d.Revision, when(&d.CreatedAt)
			_, serr := h.store.LatestSucceededDeployment(ctx, a.TeamID, e.ID)
			if serr != nil && !errors.Is(serr, store.ErrNotFound) {
				return t, serr
			}
			row.State = store.EnvironmentState(&d, serr == nil)
			row.URL = firstRouteURL(d.RenderedManifest)
		case !errors.Is(err, store.ErrNotFound):
			return t, err
		}
		if e.DeletingAt != nil {
			row.State = "deleting"
		}
		t.Rows = append(t.Rows, row)
	}
	sort.Slice(t.Rows, func(i, j int) bool { return t.Rows[i].Slug < t.Rows[j].Slug })
	return t, nil
}

// firstRouteURL is the address of the first exact-hostname route of a
// rendered manifest, "" when it has none.
func firstRouteURL(rendered json.RawMessage) string {
	if rendered == nil {
		return ""
	}
	var m manifest.Manifest
	if json.Unmarshal(rendered, &m) != nil {
		return ""
	}
	_, routes := servicesAndRoutes(&m)
	for _, r := range routes {
		if r.URL != "" {
			return r.URL
		}
	}
	return ""
}
