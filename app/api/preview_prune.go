package api

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
)

// previewPrune lists (confirm false) or deletes (confirm true) the
// previews whose branch is gone. The daemon reads the repository again
// before deleting and keeps any preview it can no longer confirm gone; a
// repository it cannot read deletes nothing (502 repository_unreachable).
func (h *handler) previewPrune(c *fiber.Ctx, pv *service.Previews, a store.Application) error {
	var req PreviewPruneRequest
	if bad := decode(c.Body(), &req); bad != nil {
		return bad.write(c)
	}
	if !req.BranchGone {
		return WriteError(c, http.StatusUnprocessableEntity, "prune_criterion_missing",
			"set branch_gone: true; previews are only pruned when their branch is gone", map[string]any{"field": "branch_gone"})
	}
	res, err := pv.PruneBranchGone(c.UserContext(), callerOf(c).actor(), h.enqueue, a.ID, req.Confirm, req.Slugs)
	if err != nil {
		return h.failPreview(c, err)
	}
	out := PreviewPruneResponse{Deleted: res.Deleted, Gone: previewStatuses(res.Gone), Kept: previewStatuses(res.Kept)}
	status := http.StatusOK
	if res.Deleted && len(out.Gone) > 0 {
		status = http.StatusAccepted
	}
	return c.Status(status).JSON(out)
}

func previewStatuses(list []service.PreviewStatus) []Preview {
	out := make([]Preview, 0, len(list))
	for _, s := range list {
		out = append(out, newPreviewStatus(s))
	}
	return out
}
