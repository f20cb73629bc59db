package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
	"github.com/slipwayhq/slipway/views/partial"
)

func (h *handler) applicationList(c *fiber.Ctx) error {
	rows, err := h.applicationRows(c)
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, "Applications", page.Applications(rows, "", nil, editorFor(h.viewContext(c), "", 0, "")))
}

func (h *handler) applicationRows(c *fiber.Ctx) ([]partial.ApplicationRow, error) {
	apps, err := h.store.ListApplications(c.UserContext(), visitorOf(c).current.Team.ID)
	if err != nil {
		return nil, err
	}
	ctx, teamID := c.UserContext(), visitorOf(c).current.Team.ID
	who, err := h.people(ctx, teamID)
	if err != nil {
		return nil, err
	}
	rows := make([]partial.ApplicationRow, len(apps))
	for i, a := range apps {
		rows[i] = partial.ApplicationRow{ID: a.ID, Name: a.Name, Revision: a.CurrentRevision, Created: when(&a.CreatedAt)}
		statuses, err := h.environmentStatuses(ctx, teamID, a.ID)
		if err != nil {
			return nil, err
		}
		var last *store.Deployment
		for _, s := range statuses {
			rows[i].Environments = append(rows[i].Environments, partial.EnvironmentBadge{Name: s.env.Name, State: s.state()})
			if s.latest != nil && (last == nil || s.latest.CreatedAt.After(last.CreatedAt)) {
				last = s.latest
			}
		}
		if last != nil {
			rows[i].LastDeploy = who.name(last.Actor) + ", " + when(&last.CreatedAt)
		}
	}
	return rows, nil
}
