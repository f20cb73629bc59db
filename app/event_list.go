package app

import (
	"encoding/json"
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
	f := store.EventFilter{ApplicationID: a.ID, Verb: v.Verb, Limit: eventPageSize, BeforeID: eventCursor(c)}
	v.Older = f.BeforeID != 0
	events, err := h.store.ListEventPage(ctx, a.TeamID, f)
	if err != nil {
		return err
	}
	who, err := h.people(ctx, a.TeamID)
	if err != nil {
		return err
	}
	for _, e := range events.Events {
		v.Rows = append(v.Rows, page.EventRow{Verb: e.Verb, Actor: who.name(e.Actor), Object: e.ObjectType, Details: compactDetails(e.Details), When: when(&e.CreatedAt)})
	}
	v.OlderURL = olderEventsURL("/applications/"+a.ID+"/events", events.NextBefore, map[string]string{"verb": v.Verb})
	if v.Older && isFragment(c) {
		return h.render(c, http.StatusOK, a.Name+" · Events", page.ApplicationEventRows(v))
	}
	if v.Verbs, err = h.store.ListEventVerbs(ctx, a.TeamID, a.ID); err != nil {
		return err
	}
	return h.render(c, http.StatusOK, a.Name+" · Events", page.ApplicationEvents(header, v))
}

// compactDetails shows an event's details object on one line, "" when empty.
func compactDetails(raw json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || len(m) == 0 {
		return ""
	}
	b, _ := json.Marshal(m)
	return string(b)
}
