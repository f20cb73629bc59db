package app

import (
	"net/http"
	"sort"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// teamEventList is the team's audit log, filterable by application (what
// names it, its environments or its deployments) and by kind of object.
func (h *handler) teamEventList(c *fiber.Ctx) error {
	ctx, teamID := c.UserContext(), visitorOf(c).current.Team.ID
	apps, err := h.store.ListApplications(ctx, teamID)
	if err != nil {
		return err
	}
	v := page.TeamEventsView{Application: c.Query("application"), Kind: c.Query("kind")}
	names := map[string]string{}
	for _, a := range apps {
		names[a.ID] = a.Name
		v.Applications = append(v.Applications, page.NamedOption{Value: a.ID, Label: a.Name})
	}
	var only map[string]bool
	if v.Application != "" {
		a, err := h.store.GetApplication(ctx, teamID, v.Application)
		if err != nil {
			return err
		}
		if only, err = h.applicationObjects(ctx, a); err != nil {
			return err
		}
	}
	events, err := h.store.ListEvents(ctx, teamID, store.EventFilter{Limit: 500})
	if err != nil {
		return err
	}
	who, err := h.people(ctx, teamID)
	if err != nil {
		return err
	}
	kinds := map[string]bool{}
	for _, e := range events {
		kinds[e.ObjectType] = true
		if (only != nil && !only[e.ObjectID]) || (v.Kind != "" && e.ObjectType != v.Kind) {
			continue
		}
		row := page.TeamEventRow{
			EventRow: page.EventRow{Verb: e.Verb, Actor: who.name(e.Actor), Object: e.ObjectType, Details: compactDetails(e.Details), When: when(&e.CreatedAt)},
			Kind:     e.ObjectType, Application: names[e.ObjectID],
		}
		if only != nil {
			row.Application = names[v.Application]
		}
		v.Rows = append(v.Rows, row)
	}
	for k := range kinds {
		v.Kinds = append(v.Kinds, k)
	}
	sort.Strings(v.Kinds)
	return h.render(c, http.StatusOK, "Audit log", page.TeamEvents(v))
}
