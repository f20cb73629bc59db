package main

import (
	"fmt"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
)

// CodeTelemetryGrantUnchecked is the offline plan's note that telemetry
// grants, which the server keeps, were not checked.
const CodeTelemetryGrantUnchecked = "telemetry_grant_unchecked"

// offlinePlanWarnings are the warnings an offline plan can know: the
// manifest's own, those each environment it would have gets once rendered
// with that environment's variables (as the server's plan does), and, for
// a telemetry receiver, a note that grants are checked by the server.
func offlinePlanWarnings(m *manifest.Manifest) manifest.Errors {
	ws := manifest.Warnings(m)
	for _, e := range manifest.ExistingEnvironments(m) {
		rc, err := renderContext(m, e.Name, "", nil)
		if err != nil {
			continue
		}
		if rendered, errs := manifest.Render(m, rc); len(errs) == 0 {
			ws = append(ws, manifest.RenderedWarnings(m, rendered, rc)...)
		}
	}
	if receiver := service.TelemetryReceiver(m); receiver != "" {
		for i, s := range m.Spec.Services {
			if s.Name == receiver {
				ws = append(ws, manifest.FieldError{Path: fmt.Sprintf("spec.services[%d].receives_telemetry", i), Code: CodeTelemetryGrantUnchecked,
					Message: fmt.Sprintf("service %s gets the telemetry socket only in environments granted telemetry; grants are kept by the server, so this offline plan cannot check them: slipway app apply reports telemetry_not_granted per environment (grant with slipway env telemetry %s ENV on)", receiver, m.Metadata.Name)})
			}
		}
	}
	return ws
}
