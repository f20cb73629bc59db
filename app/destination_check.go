package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
)

// destinationCheck is "Send test": it queues a test message, delivered by
// the worker like any other; the page shows its delivery as it goes.
func (h *handler) destinationCheck(c *fiber.Ctx) error {
	if h.notify == nil {
		return fiber.ErrServiceUnavailable
	}
	ctx, v := c.UserContext(), visitorOf(c)
	err := h.store.WithTx(ctx, func(tx *store.Store) error {
		_, err := h.notify.WithStore(tx).SendTest(ctx, v.current.Team.ID, c.Params("destination"), v.user.Email)
		return err
	})
	if err != nil {
		return err
	}
	return c.Redirect("/notifications?notice=test", http.StatusSeeOther)
}
