package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/views/page"
	"github.com/slipwayhq/slipway/views/partial"
)

func (h *handler) applicationList(c *fiber.Ctx) error {
	rows, err := h.applicationRows(c)
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, "Applications", page.Applications(rows, "", nil))
}

func (h *handler) applicationRows(c *fiber.Ctx) ([]partial.ApplicationRow, error) {
	apps, err := h.store.ListApplications(c.UserContext(), visitorOf(c).current.Team.ID)
	if err != nil {
		return nil, err
	}
	rows := make([]partial.ApplicationRow, len(apps))
	for i, a := range apps {
		rows[i] = partial.ApplicationRow{ID: a.ID, Name: a.Name, Revision: a.CurrentRevision, Created: when(&a.CreatedAt)}
	}
	return rows, nil
}
