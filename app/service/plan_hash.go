package service

import (
	"context"
	"errors"
	"sort"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

// PlanHashTargets are the environments a plan of m hashes it for: the
// application's environments (not previews), each rendered as a
// deployment there would render it, with the manifest its latest
// successful deployment runs and the spec hash that deployment recorded;
// for a new application (appID ""), the environments m declares, with
// nothing running.
func PlanHashTargets(ctx context.Context, st *store.Store, teamID, appID string, m *manifest.Manifest) ([]manifest.HashTarget, error) {
	if appID == "" {
		var out []manifest.HashTarget
		for _, e := range manifest.ExistingEnvironments(m) {
			env := store.Environment{Kind: store.KindEnvironment, Name: e.Name, Slug: e.Name, Branch: e.Branch, Commit: e.Commit}
			out = append(out, manifest.HashTarget{Environment: e.Name, Context: planRenderContext(m, "", env)})
		}
		return out, nil
	}
	envs, err := st.ListEnvironments(ctx, teamID, appID)
	if err != nil {
		return nil, err
	}
	var out []manifest.HashTarget
	for _, e := range envs {
		if e.Kind != store.KindEnvironment {
			continue
		}
		t := manifest.HashTarget{Environment: e.Name, Context: planRenderContext(m, "", e)}
		d, err := st.LatestSucceededDeployment(ctx, teamID, e.ID)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return nil, err
		default:
			t.DeployedSpecHash = d.SpecHash
			if deployed, err := manifest.Decode(d.RenderedManifest, "json"); err == nil {
				t.Deployed = deployed
			}
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Environment < out[j].Environment })
	return out, nil
}
