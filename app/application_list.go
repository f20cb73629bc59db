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
	// Three queries whatever the number of applications: environments and
	// their latest deployments are read for the whole team at once.
	envs, err := h.store.ListTeamEnvironments(ctx, teamID)
	if err != nil {
		return nil, err
	}
	latest, err := h.store.LatestDeploymentPerEnvironment(ctx, teamID)
	if err != nil {
		return nil, err
	}
	byApp := map[string][]store.Environment{}
	for _, e := range envs {
		if e.Kind == store.KindEnvironment {
			byApp[e.ApplicationID] = append(byApp[e.ApplicationID], e)
		}
	}
	rows := make([]partial.ApplicationRow, len(apps))
	for i, a := range apps {
		rows[i] = partial.ApplicationRow{ID: a.ID, Name: a.Name, Revision: a.CurrentRevision, Created: when(&a.CreatedAt)}
		var last *store.Deployment
		for _, e := range byApp[a.ID] {
			var d *store.Deployment
			ed, ok := latest[e.ID]
			if ok {
				d = &ed.Latest
			}
			rows[i].Environments = append(rows[i].Environments, partial.EnvironmentBadge{Name: e.Name, State: environmentState(d, ed.EverSucceeded)})
			if d != nil && (last == nil || d.CreatedAt.After(last.CreatedAt)) {
				last = d
			}
		}
		if last != nil {
			rows[i].LastDeploy = who.name(last.Actor) + ", " + when(&last.CreatedAt)
		}
	}
	return rows, nil
}
