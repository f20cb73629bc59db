package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
)

// AuditEvent is one entry of the team's audit log on the wire.
type AuditEvent struct {
	ID         int64           `json:"id"`
	Actor      string          `json:"actor"`
	Verb       string          `json:"verb"`
	ObjectType string          `json:"object_type"`
	ObjectID   string          `json:"object_id"`
	Details    json.RawMessage `json:"details"`
	CreatedAt  time.Time       `json:"created_at"`
}

// AuditEventList is one page of the audit log, newest first. NextBefore is
// the `before` of the next (older) page, absent on the last one.
type AuditEventList struct {
	Events     []AuditEvent `json:"events"`
	NextBefore int64        `json:"next_before,omitempty"`
}

// maxEventPage bounds ?limit= of the audit log.
const maxEventPage = 500

var eventListQuery = []QueryParam{
	{"limit", "integer", "At most this many events (1-500, default 50), newest first."},
	{"before", "integer", "Only events older than this id: the next_before of the previous page."},
	{"application", "string", "Only events naming this application (name or id), its environments or its deployments."},
	{"actor", "string", "Only this actor's events: user:<id>, token:<id>, github or system."},
	{"kind", "string", "Only events about this kind of object: application, environment, deployment, member..."},
}

// eventList pages through the team's audit log backwards with a keyset
// cursor, so a page stays stable while new events arrive.
func (h *handler) eventList(c *fiber.Ctx) error {
	ctx, team := c.UserContext(), callerOf(c).token.TeamID
	f := store.EventFilter{Actor: c.Query("actor"), ObjectType: c.Query("kind"), Limit: 50}
	if s := c.Query("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxEventPage {
			return WriteError(c, http.StatusBadRequest, "limit_invalid", "limit must be a whole number from 1 to 500", map[string]any{"field": "limit"})
		}
		f.Limit = n
	}
	if s := c.Query("before"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 {
			return WriteError(c, http.StatusBadRequest, "before_invalid", "before must be an event id, the next_before of the previous page", map[string]any{"field": "before"})
		}
		f.BeforeID = n
	}
	if ref := c.Query("application"); ref != "" {
		a, err := h.applicationByRef(c, ref)
		if err != nil {
			return h.fail(c, err)
		}
		f.ApplicationID = a.ID
	}
	p, err := h.store.ListEventPage(ctx, team, f)
	if err != nil {
		return h.fail(c, err)
	}
	out := AuditEventList{Events: make([]AuditEvent, 0, len(p.Events)), NextBefore: p.NextBefore}
	for _, e := range p.Events {
		out.Events = append(out.Events, AuditEvent{ID: e.ID, Actor: e.Actor, Verb: e.Verb, ObjectType: e.ObjectType, ObjectID: e.ObjectID, Details: e.Details, CreatedAt: e.CreatedAt})
	}
	return c.JSON(out)
}
