package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
)

// previewList lists the application's previews with their branch states,
// read from the repository now.
func (h *handler) previewList(c *fiber.Ctx, pv *service.Previews, a store.Application) error {
	list, err := pv.List(c.UserContext(), callerOf(c).actor(), a.ID)
	if err != nil {
		return h.failPreview(c, err)
	}
	out := PreviewList{Previews: make([]Preview, 0, len(list))}
	for _, s := range list {
		out.Previews = append(out.Previews, newPreviewStatus(s))
	}
	return c.JSON(out)
}

// previewShow shows one preview, its branch state and the routes it serves.
func (h *handler) previewShow(c *fiber.Ctx, pv *service.Previews, a store.Application) error {
	ctx, actor := c.UserContext(), callerOf(c).actor()
	s, err := pv.Show(ctx, actor, a.ID, c.Params("slug"))
	if err != nil {
		return h.failPreview(c, err)
	}
	routes, err := pv.Routes(ctx, actor, a.ID, c.Params("slug"))
	if err != nil {
		return h.failPreview(c, err)
	}
	out := newPreviewStatus(s)
	out.URLs = previewURLs(routes)
	return c.JSON(out)
}
