package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
)

// registerEnvironmentTelemetry mounts PUT .../environments/{env}/telemetry.
func (h *handler) registerEnvironmentTelemetry(r fiber.Router) {
	r.Put("/applications/:app/environments/:env/telemetry", h.requireScope(auth.TelemetryGrant), h.environmentTelemetry)
}

// TelemetryRequest is PUT .../environments/{env}/telemetry.
type TelemetryRequest struct {
	Granted bool `json:"granted"`
}

// EnvironmentTelemetry is an environment's telemetry grant.
type EnvironmentTelemetry struct {
	Environment string `json:"environment"`
	Granted     bool   `json:"granted"`
	// Receiver is the saved manifest's receives_telemetry service; "" when
	// none: the grant then mounts nothing.
	Receiver string `json:"receiver"`
	// Warnings: telemetry_not_granted when a receiver runs without the
	// grant, telemetry_receiver_missing when a grant has no receiver.
	Warnings []FieldError `json:"warnings"`
}

// environmentTelemetry grants or revokes an environment's telemetry.
func (h *handler) environmentTelemetry(c *fiber.Ctx) error {
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	var req TelemetryRequest
	if bad := decode(c.Body(), &req); bad != nil {
		return bad.write(c)
	}
	g, err := service.SetEnvironmentTelemetry(c.UserContext(), h.store, callerOf(c).actor(), h.enqueue, a.ID, h.environmentName(c, a.ID), req.Granted)
	if err != nil {
		return h.fail(c, err)
	}
	out := EnvironmentTelemetry{Environment: g.Environment.Name, Granted: g.Granted, Receiver: g.Receiver, Warnings: []FieldError{}}
	switch {
	case g.Receiver != "" && !g.Granted:
		out.Warnings = append(out.Warnings, FieldError{Path: "spec.services." + g.Receiver + ".receives_telemetry", Code: "telemetry_not_granted",
			Message: "the receiver runs without the telemetry socket in " + g.Environment.Name})
	case g.Receiver == "" && g.Granted:
		out.Warnings = append(out.Warnings, FieldError{Path: "spec.services", Code: "telemetry_receiver_missing",
			Message: "no service sets receives_telemetry: the grant mounts nothing until one does"})
	}
	return c.JSON(out)
}
