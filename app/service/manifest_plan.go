package service

import (
	"context"
	"errors"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/savedmanifest"
	"github.com/slipwayhq/slipway/store"
)

// ManifestPlan is what saving a manifest would change, as the dashboard
// and the API show it.
type ManifestPlan struct {
	manifest.Plan
	// Against is the saved revision the plan compares with; 0 for a new
	// application.
	Against int64
}

// PlanManifest plans saving m (decoded and validated, with its warnings)
// for the application appID, or, when appID is "", the one m names (none
// yet: a new application): the diff against its saved revision, how its
// environments converge, the rollouts, the spec hash each environment
// would get beside what runs there, and the warnings, including those
// only an environment's own variables raise.
func PlanManifest(ctx context.Context, st *store.Store, teamID, appID string, m *manifest.Manifest, warnings manifest.Errors) (ManifestPlan, error) {
	var app store.Application
	var err error
	if appID != "" {
		app, err = st.GetApplication(ctx, teamID, appID)
	} else {
		app, err = st.GetApplicationByName(ctx, teamID, m.Metadata.Name)
	}
	if err != nil && (appID != "" || !errors.Is(err, store.ErrNotFound)) {
		return ManifestPlan{}, err
	}
	var out ManifestPlan
	var old *manifest.Manifest
	var existing []manifest.ExistingEnvironment
	if app.ID != "" {
		var rev store.ManifestRevision
		if old, rev, err = savedmanifest.CurrentLenient(ctx, st, teamID, app.ID); err != nil {
			return ManifestPlan{}, err
		}
		out.Against = rev.Revision
		if existing, err = existingEnvironments(ctx, st, teamID, app.ID); err != nil {
			return ManifestPlan{}, err
		}
	}
	out.Plan = manifest.NewPlan(old, m, existing)
	out.Warnings = append(out.Warnings, warnings...)
	if app.ID != "" {
		envWarnings, err := PlanWarnings(ctx, st, teamID, app.ID, m)
		if err != nil {
			return ManifestPlan{}, err
		}
		out.Warnings = append(out.Warnings, envWarnings...)
	} else {
		out.Warnings = append(out.Warnings, DeclaredEnvironmentWarnings(m)...)
	}
	targets, err := PlanHashTargets(ctx, st, teamID, app.ID, m)
	if err != nil {
		return ManifestPlan{}, err
	}
	out.Hashes = manifest.PlanHashes(m, targets)
	return out, nil
}

// existingEnvironments is the application's environments as a plan needs
// them (nil when it has none, so the plan treats them as new).
func existingEnvironments(ctx context.Context, st *store.Store, teamID, appID string) ([]manifest.ExistingEnvironment, error) {
	envs, err := st.ListEnvironments(ctx, teamID, appID)
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, e := range envs {
		names[e.ID] = e.Name
	}
	var out []manifest.ExistingEnvironment
	for _, e := range envs {
		if e.Kind == store.KindEnvironment {
			out = append(out, manifest.ExistingEnvironment{Name: e.Name, Branch: e.Branch, Commit: e.Commit, PromoteFrom: names[e.PromoteFrom], Sync: e.Sync})
		}
	}
	return out, nil
}
