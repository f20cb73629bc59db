package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
)

// PlanResponse is POST /applications/plan: what saving the manifest would
// change, as app plan shows it offline, against the saved revision.
type PlanResponse struct {
	// Against is the saved revision compared with; 0 for a new application.
	Against      int64                        `json:"against"`
	Changes      []manifest.Change            `json:"changes"`
	Environments []manifest.EnvironmentChange `json:"environments"`
	Rollouts     []manifest.ServiceRollout    `json:"rollouts"`
	// Hashes is the spec hash a deployment to each environment would
	// record, beside the running deployment's, with each service's hash
	// marked added, changed, unchanged, removed or unknown.
	Hashes   []manifest.EnvironmentHash `json:"hashes"`
	Warnings []FieldError               `json:"warnings"`
}

// manifestPlan plans saving the posted manifest for the application it
// names, changing nothing.
func (h *handler) manifestPlan(c *fiber.Ctx) error {
	body, format, ok, answered := manifestBody(c)
	if !ok {
		return answered
	}
	m, warnings, err := service.DecodeManifest(body, format)
	if err != nil {
		return h.failManifest(c, err)
	}
	p, err := service.PlanManifest(c.UserContext(), h.store, callerOf(c).token.TeamID, "", m, warnings)
	if err != nil {
		return h.fail(c, err)
	}
	return c.JSON(PlanResponse{Against: p.Against, Changes: p.Changes, Environments: p.Environments, Rollouts: p.Rollouts,
		Hashes: p.Hashes, Warnings: newFieldErrors(p.Warnings)})
}
