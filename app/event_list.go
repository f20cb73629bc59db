package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// eventList is the Events tab: the audit log of the application, its
// environments and its deployments, newest first, one page at a time
// (?before= is the keyset cursor of an older page, as on /events),
// filterable by verb. An htmx request for an older page gets only its
// rows.
func (h *handler) eventList(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "events")
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	v := page.ApplicationEventsView{Verb: c.Query("verb")}
	f := store.EventFilter{ApplicationID: a.ID, Verb: v.Verb, Summary: v.Verb == "", Limit: eventPageSize, BeforeID: eventCursor(c)}
	v.Older = f.BeforeID != 0
	events, err := h.store.ListEventPage(ctx, a.TeamID, f)
	if err != nil {
		return err
	}
	names, err := h.loadEventNames(ctx, a.TeamID, events.Events)
	if err != nil {
		return err
	}
	v.Rows = names.rows(events.Events)
	v.OlderURL = olderEventsURL("/applications/"+a.ID+"/events", events.NextBefore, map[string]string{"verb": v.Verb})
	if v.Older && isFragment(c) {
		return h.render(c, http.StatusOK, a.Name+" · Events", page.ApplicationEventRows(v))
	}
	if v.Verbs, err = h.store.ListEventVerbs(ctx, a.TeamID, a.ID); err != nil {
		return err
	}
	return h.render(c, http.StatusOK, a.Name+" · Events", page.ApplicationEvents(header, v))
}
