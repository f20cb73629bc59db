package api

import (
	"slices"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
)

// deploymentShow is one deployment with its steps and its events, oldest
// event first. Events carry codes, names and messages, never secret values.
func (h *handler) deploymentShow(c *fiber.Ctx) error {
	ctx, team := c.UserContext(), callerOf(c).token.TeamID
	d, err := h.store.GetDeployment(ctx, team, c.Params("deployment"))
	if err != nil {
		return h.fail(c, err)
	}
	evs, err := h.store.ListEvents(ctx, team, store.EventFilter{ObjectType: "deployment", ObjectID: d.ID, Limit: 500})
	if err != nil {
		return h.fail(c, err)
	}
	name := ""
	if env, err := h.store.GetEnvironment(ctx, team, d.EnvironmentID); err == nil {
		name = env.Name
	}
	out := newDeployment(d, name)
	out.Events = make([]Event, 0, len(evs))
	for _, e := range slices.Backward(evs) {
		out.Events = append(out.Events, Event{ID: e.ID, Actor: e.Actor, Verb: e.Verb, Details: e.Details, CreatedAt: e.CreatedAt})
	}
	return c.JSON(out)
}
