package api

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
)

// SnapshotContentType is the body of POST .../previews/local: the bundle
// `slipway preview deploy --local` writes (a v2 git bundle).
const SnapshotContentType = "application/x-git-bundle"

// PreviewLocalDeployed answers a local deploy: the preview of the
// snapshot's branch and slot, the queued deployment, and the snapshot
// commit with the base commit it was taken on.
type PreviewLocalDeployed struct {
	Preview
	Commit string `json:"commit"`
	Base   string `json:"base"`
	// Created is true when the preview was created by this deploy.
	Created bool `json:"created"`
}

// TakesSnapshotUpload reports whether a request is a local preview upload
// (POST /api/v1/applications/{app}/previews/local), whose body may be up to
// service.MaxSnapshotBytes rather than the server's usual limit.
func TakesSnapshotUpload(method, path string) bool {
	return method == http.MethodPost && strings.HasPrefix(path, "/api/v1/applications/") && strings.HasSuffix(path, "/previews/local")
}

// previewLocal deploys an uploaded worktree snapshot as the preview of its
// branch and ?slot=; 202 with the queued deployment. The body is the raw
// bundle, at most service.MaxSnapshotBytes (and the server's body limit).
func (h *handler) previewLocal(c *fiber.Ctx, pv *service.Previews, a store.Application) error {
	p, err := pv.DeployLocal(c.UserContext(), callerOf(c).actor(), h.enqueue, a.ID,
		service.LocalPreviewRequest{Slot: c.Query("slot"), Bundle: c.Body()})
	if err != nil {
		return h.failPreview(c, err)
	}
	return c.Status(http.StatusAccepted).JSON(PreviewLocalDeployed{
		Preview: newPreview(p.Preview), Commit: p.Commit, Base: p.Base, Created: p.Created,
	})
}
