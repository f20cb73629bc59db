package service

import (
	"context"
	"fmt"

	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

// PlanWarnings warns about deploying m to the application's existing
// environments: imports that would not connect (import_unconnected),
// judged against what the other environments deployed, and a telemetry
// receiver in an environment not granted telemetry
// (telemetry_not_granted). Environments whose rendering fails are
// skipped: the deployment reports that.
func PlanWarnings(ctx context.Context, st *store.Store, teamID, appID string, m *manifest.Manifest) (manifest.Errors, error) {
	if m == nil || (len(m.Spec.Imports) == 0 && TelemetryReceiver(m) == "") {
		return nil, nil
	}
	envs, err := st.ListEnvironments(ctx, teamID, appID)
	if err != nil {
		return nil, err
	}
	if len(envs) == 0 {
		return nil, nil
	}
	var ls *jobs.LinkState
	if len(m.Spec.Imports) > 0 {
		loaded, err := jobs.LoadLinks(ctx, st, teamID)
		if err != nil {
			return nil, err
		}
		ls = &loaded
	}
	var out manifest.Errors
	for _, e := range envs {
		if e.Kind != store.KindEnvironment {
			continue
		}
		rendered, errs := manifest.Render(m, manifest.RenderContext{Environment: e.Name, Slug: e.Slug, GitBranch: e.Branch, GitSHA: e.Commit, DeploymentID: manifest.PlanDeploymentID})
		if len(errs) > 0 {
			continue
		}
		if ls != nil {
			out = append(out, unconnectedWarnings(*ls, e, rendered)...)
		}
		tw, err := TelemetryWarnings(ctx, st, teamID, e, rendered)
		if err != nil {
			return nil, err
		}
		out = append(out, tw...)
	}
	return out, nil
}

// unconnectedWarnings are the import_unconnected warnings of rendered in
// environment e.
func unconnectedWarnings(ls jobs.LinkState, e store.Environment, rendered *manifest.Manifest) manifest.Errors {
	var out manifest.Errors
	for _, u := range ls.UnconnectedIf(e.ID, rendered) {
		for i, im := range rendered.Spec.Imports {
			if im.Application == u.Application && im.Service == u.Service {
				out = append(out, manifest.FieldError{Path: fmt.Sprintf("spec.imports[%d]", i), Code: jobs.CodeImportUnconnected,
					Message: "environment " + e.Name + ": " + jobs.UnconnectedMessage(u)})
			}
		}
	}
	return out
}
