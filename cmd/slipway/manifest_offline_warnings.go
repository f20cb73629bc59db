package main

import (
	"fmt"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
)

// CodeTelemetryGrantUnchecked is the offline plan's note that telemetry
// grants, which the server keeps, were not checked.
const CodeTelemetryGrantUnchecked = "telemetry_grant_unchecked"

// previewPlanBranch is the branch an offline plan renders previews for:
// [spec.previews] sets the same variables for every branch.
const previewPlanBranch = "preview"

// offlinePlanWarnings are the warnings an offline plan can know: the
// manifest's own, those each environment it would have gets once rendered
// with that environment's variables (as the server's plan does), those a
// preview gets once rendered with [spec.previews] variables, and, for a
// telemetry receiver, a note that grants are checked by the server.
func offlinePlanWarnings(m *manifest.Manifest) manifest.Errors {
	ws := manifest.Warnings(m)
	for _, e := range manifest.ExistingEnvironments(m) {
		ws = append(ws, offlineRenderedWarnings(m, e.Name, "")...)
	}
	if m.Spec.Previews != nil {
		ws = append(ws, offlineRenderedWarnings(m, "", previewPlanBranch)...)
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

// offlineRenderedWarnings are the manifest.RenderedWarnings of m rendered
// for environment env, or for the preview of branch preview; none when
// the rendering fails (slipway app render reports that).
func offlineRenderedWarnings(m *manifest.Manifest, env, preview string) manifest.Errors {
	rc, err := renderContext(m, env, preview, nil)
	if err != nil {
		return nil
	}
	rendered, errs := manifest.Render(m, rc)
	if len(errs) > 0 {
		return nil
	}
	return manifest.RenderedWarnings(m, rendered, rc)
}

// offlineHashTargets are the environments next declares, each rendered as
// a plan renders it, with prev (the --against manifest, nil for none)
// rendered the same way standing for what runs there.
func offlineHashTargets(prev, next *manifest.Manifest) []manifest.HashTarget {
	var out []manifest.HashTarget
	for _, e := range manifest.ExistingEnvironments(next) {
		rc, err := renderContext(next, e.Name, "", nil)
		if err != nil {
			continue
		}
		t := manifest.HashTarget{Environment: e.Name, Context: rc}
		if prev != nil {
			if prc, err := renderContext(prev, e.Name, "", nil); err == nil {
				if rendered, errs := manifest.Render(prev, prc); len(errs) == 0 {
					t.Deployed = rendered
					t.DeployedSpecHash, _ = manifest.SpecHash(rendered, nil)
				}
			}
		}
		out = append(out, t)
	}
	return out
}
