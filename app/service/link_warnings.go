package service

import (
	"context"
	"fmt"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/store"
)

// PlanWarnings warns about deploying m to the application's existing
// environments, each rendered with its own variables: imports that would
// not connect (import_unconnected), judged against what the other
// environments deployed, a telemetry receiver in an environment not
// granted telemetry (telemetry_not_granted), and the manifest warnings
// that only its rendered values show (manifest.RenderedWarnings).
// Environments whose rendering fails are skipped: the deployment reports
// that. An application without environments yet gets
// DeclaredEnvironmentWarnings.
func PlanWarnings(ctx context.Context, st *store.Store, teamID, appID string, m *manifest.Manifest) (manifest.Errors, error) {
	if m == nil {
		return nil, nil
	}
	envs, err := st.ListEnvironments(ctx, teamID, appID)
	if err != nil {
		return nil, err
	}
	if len(envs) == 0 {
		return DeclaredEnvironmentWarnings(m), nil
	}
	var ls *pipeline.LinkState
	if len(m.Spec.Imports) > 0 {
		loaded, err := pipeline.LoadLinks(ctx, st, teamID)
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
		rendered, ws, ok := renderedPlanWarnings(m, e)
		if !ok {
			continue
		}
		out = append(out, ws...)
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

// DeclaredEnvironmentWarnings are the manifest.RenderedWarnings of each
// environment saving m would create, for an application that has none
// yet (a new application): each rendered with its own variables, as
// PlanWarnings renders existing ones.
func DeclaredEnvironmentWarnings(m *manifest.Manifest) manifest.Errors {
	var out manifest.Errors
	for _, e := range manifest.ExistingEnvironments(m) {
		env := store.Environment{Kind: store.KindEnvironment, Name: e.Name, Slug: e.Name, Branch: e.Branch, Commit: e.Commit}
		if _, ws, ok := renderedPlanWarnings(m, env); ok {
			out = append(out, ws...)
		}
	}
	return out
}

// renderedPlanWarnings renders m for env as a plan does and returns the
// rendering and the warnings only it shows; ok is false when the
// rendering fails.
func renderedPlanWarnings(m *manifest.Manifest, env store.Environment) (*manifest.Manifest, manifest.Errors, bool) {
	rc := planRenderContext(m, "", env)
	rendered, errs := manifest.Render(m, rc)
	if len(errs) > 0 {
		return nil, nil, false
	}
	return rendered, manifest.RenderedWarnings(m, rendered, rc), true
}

// planRenderContext is how a plan renders m for env (manifest.PlanContext);
// appName "" means metadata.name.
func planRenderContext(m *manifest.Manifest, appName string, env store.Environment) manifest.RenderContext {
	t := pipeline.RenderTarget(env)
	t.AppName = appName
	return manifest.PlanContext(m, t)
}

// unconnectedWarnings are the import_unconnected warnings of rendered in
// environment e.
func unconnectedWarnings(ls pipeline.LinkState, e store.Environment, rendered *manifest.Manifest) manifest.Errors {
	var out manifest.Errors
	for _, u := range ls.UnconnectedIf(e.ID, rendered) {
		for i, im := range rendered.Spec.Imports {
			if im.Application == u.Application && im.Service == u.Service {
				out = append(out, manifest.FieldError{Path: fmt.Sprintf("spec.imports[%d]", i), Code: pipeline.CodeImportUnconnected,
					Message: "environment " + e.Name + ": " + pipeline.UnconnectedMessage(u)})
			}
		}
	}
	return out
}
