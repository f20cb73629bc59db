package api

import (
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
)

// Preview is one preview of an application: a disposable deployment of a
// branch (and optional slot) of its manifest repository.
type Preview struct {
	ID            string `json:"id"`
	ApplicationID string `json:"application_id"`
	// Slug is the preview's DNS-safe name (env.slug), stored at creation.
	Slug      string `json:"slug"`
	Branch    string `json:"branch"`
	Slot      string `json:"slot,omitempty"`
	Untrusted bool   `json:"untrusted"`
	// Deleting is true while the worker removes the preview.
	Deleting bool `json:"deleting"`
	// BranchState is exists, moved, gone, local or unknown, read on demand (empty
	// on create and deploy answers, which do not read the repository).
	BranchState    string `json:"branch_state,omitempty"`
	BranchHead     string `json:"branch_head,omitempty"`
	FetchedCommit  string `json:"fetched_commit,omitempty"`
	BranchStateErr string `json:"branch_state_error,omitempty"`
	// SnapshotCommit and SnapshotBase are set when the latest deployment
	// is a local snapshot (branch_state local): the snapshot commit and the
	// commit it was taken on.
	SnapshotCommit string `json:"snapshot_commit,omitempty"`
	SnapshotBase   string `json:"snapshot_base,omitempty"`
	// Warnings are the daemon's preview bounds applied to the latest
	// deployment (default CPU and memory limits, capped replicas).
	Warnings   []string    `json:"warnings"`
	Deployment *Deployment `json:"deployment,omitempty"`
	// URLs are where the preview's routes answer (GET of one preview
	// only); see GET .../previews/{slug}/routes for every detail.
	URLs      []PreviewURL `json:"urls,omitempty"`
	CreatedAt time.Time    `json:"created_at"`
}

// PreviewURL is one route of a preview that serves now.
type PreviewURL struct {
	Hostname   string `json:"hostname"`
	Visibility string `json:"visibility"`
	// URL is empty for a wildcard hostname.
	URL string `json:"url,omitempty"`
}

// PreviewList is GET /applications/{app}/previews.
type PreviewList struct {
	Previews []Preview `json:"previews"`
}

// PreviewCreateRequest is POST /applications/{app}/previews.
type PreviewCreateRequest struct {
	Branch string `json:"branch"`
	Slot   string `json:"slot,omitempty"`
	// Deploy requests the first deployment of a new preview (default true).
	Deploy *bool `json:"deploy,omitempty"`
}

// PreviewCreated answers a create: Created is false when the preview
// already existed (it is returned as it is, not redeployed).
type PreviewCreated struct {
	Preview
	Created bool `json:"created"`
}

// PreviewPruneRequest is POST /applications/{app}/previews/prune.
type PreviewPruneRequest struct {
	// BranchGone must be true: previews whose branch is gone are pruned.
	BranchGone bool `json:"branch_gone"`
	// Confirm deletes; without it the answer only lists what would go.
	Confirm bool `json:"confirm"`
	// Slugs restricts a confirmed prune to these previews (the ones the
	// caller reviewed); empty means every preview whose branch is gone.
	Slugs []string `json:"slugs,omitempty"`
}

// PreviewPruneResponse lists the previews pruned (or that would be) and
// the ones kept because their branch could no longer be confirmed gone.
type PreviewPruneResponse struct {
	Deleted bool      `json:"deleted"`
	Gone    []Preview `json:"gone"`
	Kept    []Preview `json:"kept"`
}

// registerPreviews mounts the preview routes.
func (h *handler) registerPreviews(r fiber.Router) {
	r.Get("/applications/:app/previews", h.requireScope(auth.AppsRead), h.previewRoute(h.previewList))
	r.Post("/applications/:app/previews", h.requireScope(auth.AppsDeploy), h.previewRoute(h.previewCreate))
	r.Post("/applications/:app/previews/prune", h.requireScope(auth.AppsDelete), h.previewRoute(h.previewPrune))
	r.Post("/applications/:app/previews/local", h.requireScope(auth.AppsDeploy), h.previewRoute(h.previewLocal))
	r.Get("/applications/:app/previews/:slug", h.requireScope(auth.AppsRead), h.previewRoute(h.previewShow))
	r.Delete("/applications/:app/previews/:slug", h.requireScope(auth.AppsDelete), h.previewRoute(h.previewDelete))
	r.Post("/applications/:app/previews/:slug/deploy", h.requireScope(auth.AppsDeploy), h.previewRoute(h.previewDeploy))
}

// previewRoute runs a preview route with the preview machinery and the
// caller's application (:app). It answers previews_unavailable when this
// server has no previews, and the application lookup's errors.
func (h *handler) previewRoute(route func(c *fiber.Ctx, pv *service.Previews, a store.Application) error) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if h.previews == nil {
			return WriteError(c, http.StatusServiceUnavailable, "previews_unavailable", "this server is not configured for previews", nil)
		}
		a, err := h.application(c)
		if err != nil {
			return h.fail(c, err)
		}
		return route(c, h.previews, a)
	}
}

// failPreview answers preview errors: a preview being deleted or a limit
// reached conflicts with the current state.
func (h *handler) failPreview(c *fiber.Ctx, err error) error {
	var ie *service.InputError
	if errors.As(err, &ie) {
		switch ie.Code {
		case service.CodePreviewDeleting, service.CodePreviewLimitReached:
			return WriteError(c, http.StatusConflict, ie.Code, ie.Message, map[string]any{"field": ie.Field})
		case "repository_unreachable":
			return WriteError(c, http.StatusBadGateway, ie.Code, ie.Message, map[string]any{"field": ie.Field})
		}
	}
	return h.fail(c, err)
}

func newPreview(p service.Preview) Preview {
	env := p.Environment
	out := Preview{
		ID: env.ID, ApplicationID: env.ApplicationID, Slug: env.Slug, Branch: env.Branch, Slot: env.Slot,
		Untrusted: env.Untrusted, Deleting: env.DeletingAt != nil, Warnings: []string{}, CreatedAt: env.CreatedAt,
	}
	if p.Deployment != nil {
		d := newDeployment(*p.Deployment, env.Name)
		out.Deployment = &d
	}
	return out
}

func newPreviewStatus(s service.PreviewStatus) Preview {
	out := newPreview(s.Preview)
	out.BranchState, out.BranchHead, out.FetchedCommit, out.BranchStateErr = string(s.BranchState), s.Head, s.FetchedCommit, s.StateError
	out.SnapshotCommit, out.SnapshotBase = s.SnapshotCommit, s.SnapshotBase
	if s.Warnings != nil {
		out.Warnings = s.Warnings
	}
	return out
}

// previewURLs lists where the preview's routes answer. Private routes
// answer only on the gateway's private listener.
func previewURLs(routes []store.DeployedRoute) []PreviewURL {
	out := make([]PreviewURL, 0, len(routes))
	for _, r := range routes {
		u := PreviewURL{Hostname: r.Hostname, Visibility: r.Visibility}
		if !r.Wildcard {
			u.URL = (&url.URL{Scheme: "http", Host: r.Hostname, Path: "/"}).String()
		}
		out = append(out, u)
	}
	return out
}
