package app

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// teamEventList is the team's audit log, newest first, one page at a time
// (?before= is the keyset cursor of an older page), filterable by
// application (what names it, its environments or its deployments), by
// kind of object and by actor. An htmx request for an older page gets
// only its rows.
func (h *handler) teamEventList(c *fiber.Ctx) error {
	ctx, teamID := c.UserContext(), visitorOf(c).current.Team.ID
	v := page.TeamEventsView{Application: c.Query("application"), Kind: c.Query("kind"), Actor: c.Query("actor")}
	f := store.EventFilter{ObjectType: v.Kind, Actor: v.Actor, Limit: eventPageSize, BeforeID: eventCursor(c)}
	v.Older = f.BeforeID != 0
	apps, err := h.store.ListApplications(ctx, teamID)
	if err != nil {
		return err
	}
	for _, a := range apps {
		v.Applications = append(v.Applications, page.NamedOption{Value: a.ID, Label: a.Name})
	}
	if v.Application != "" {
		a, err := h.store.GetApplication(ctx, teamID, v.Application)
		if err != nil {
			return err
		}
		f.ApplicationID = a.ID
	}
	// Without a kind filter, a deployment is one entry; filtered by kind
	// deployment, its every step shows.
	f.Summary = v.Kind == ""
	events, err := h.store.ListEventPage(ctx, teamID, f)
	if err != nil {
		return err
	}
	names, err := h.loadEventNames(ctx, teamID, events.Events)
	if err != nil {
		return err
	}
	v.Rows = names.rows(events.Events)
	who := names.who
	v.OlderURL = olderEventsURL("/events", events.NextBefore, map[string]string{"application": v.Application, "kind": v.Kind, "actor": v.Actor})
	if v.Older && isFragment(c) {
		return h.render(c, http.StatusOK, "Audit log", page.TeamEventRows(v))
	}
	facets, err := h.store.ListEventFacets(ctx, teamID)
	if err != nil {
		return err
	}
	v.Kinds = facets.Kinds
	for _, a := range facets.Actors {
		label := who.name(a)
		if id, ok := strings.CutPrefix(a, "token:"); ok {
			label = "API token " + id
		}
		v.Actors = append(v.Actors, page.NamedOption{Value: a, Label: label})
	}
	return h.render(c, http.StatusOK, "Audit log", page.TeamEvents(v))
}
