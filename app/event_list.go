package app

import (
	"encoding/json"
	"net/http"
	"sort"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// eventList is the Events tab: the audit log of the application, its
// environments and its deployments, filterable by verb.
func (h *handler) eventList(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "events")
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	events, err := h.store.ListEvents(ctx, a.TeamID, store.EventFilter{ApplicationID: a.ID, Limit: 500})
	if err != nil {
		return err
	}
	who, err := h.people(ctx, a.TeamID)
	if err != nil {
		return err
	}
	verb := c.Query("verb")
	seen := map[string]bool{}
	var verbs []string
	var rows []page.EventRow
	for _, e := range events {
		if !seen[e.Verb] {
			seen[e.Verb] = true
			verbs = append(verbs, e.Verb)
		}
		if verb != "" && e.Verb != verb {
			continue
		}
		rows = append(rows, page.EventRow{Verb: e.Verb, Actor: who.name(e.Actor), Object: e.ObjectType, Details: compactDetails(e.Details), When: when(&e.CreatedAt)})
	}
	sort.Strings(verbs)
	return h.render(c, http.StatusOK, a.Name+" · Events", page.ApplicationEvents(header, rows, verbs, verb))
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
