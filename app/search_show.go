package app

import (
	"errors"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
)

// searchShow is the header's search: an application named exactly q
// opens; anything else lists the applications whose names contain q.
func (h *handler) searchShow(c *fiber.Ctx) error {
	q := strings.TrimSpace(c.Query("q"))
	if q == "" {
		return redirect(c, "/applications")
	}
	a, err := h.store.GetApplicationByName(c.UserContext(), visitorOf(c).current.Team.ID, strings.ToLower(q))
	switch {
	case err == nil:
		return redirect(c, "/applications/"+a.ID)
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	return redirect(c, "/applications?q="+url.QueryEscape(q))
}
