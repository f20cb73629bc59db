package api

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/sampler"
)

// MetricsResponse is GET /applications/{app}/environments/{env}/metrics:
// the environment's usage series over the range.
type MetricsResponse = sampler.Series

func (h *handler) registerMetrics(r fiber.Router) {
	r.Get("/applications/:app/environments/:env/metrics", h.requireScope(auth.AppsRead), h.environmentMetrics)
}

func (h *handler) environmentMetrics(c *fiber.Ctx) error {
	rng, ok := sampler.ParseRange(c.Query("range"))
	if !ok {
		names := make([]string, len(sampler.Ranges))
		for i, r := range sampler.Ranges {
			names[i] = r.Name
		}
		return WriteError(c, http.StatusUnprocessableEntity, "range_invalid",
			"range must be one of "+strings.Join(names, ", "), map[string]any{"field": "range"})
	}
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	env, err := h.namedEnvironment(c, a)
	if err != nil {
		return h.fail(c, err)
	}
	series, err := sampler.Read(c.UserContext(), h.store, a.TeamID, env.ID, rng, h.now())
	if err != nil {
		return h.fail(c, err)
	}
	return c.JSON(series)
}
