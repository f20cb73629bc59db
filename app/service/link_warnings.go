package service

import (
	"context"
	"fmt"

	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

// ImportWarnings warns (import_unconnected) about the imports of m that
// would not connect if it were deployed to the application's existing
// environments, judged against what the other environments deployed.
// Environments whose rendering fails are skipped: the deployment reports
// that.
func ImportWarnings(ctx context.Context, st *store.Store, teamID, appID string, m *manifest.Manifest) (manifest.Errors, error) {
	if m == nil || len(m.Spec.Imports) == 0 {
		return nil, nil
	}
	envs, err := st.ListEnvironments(ctx, teamID, appID)
	if err != nil {
		return nil, err
	}
	if len(envs) == 0 {
		return nil, nil
	}
	ls, err := jobs.LoadLinks(ctx, st, teamID)
	if err != nil {
		return nil, err
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
		out = append(out, unconnectedWarnings(ls, e, rendered)...)
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
