package service

import (
	"context"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/savedmanifest"
	"github.com/slipwayhq/slipway/store"
)

// PromoteFromResult says how SetPromoteFrom recorded the source.
type PromoteFromResult struct {
	// Declared is true when the manifest declares the environment, so the
	// source was saved as its block's promote_from in Revision.
	Declared bool
	Revision int64
}

// SetPromoteFrom makes env receive releases promoted from source, as the
// contract wants it recorded: in the manifest when it declares env
// (promote_from in [spec.environments.<env>], a new revision, with an
// empty block for source when it has none, since promote_from must name a
// declared environment), else on the environment itself, as env source
// does. Nothing is deployed either way; validation refusals (a block that
// also sets branch, commit or sync; a cycle) come back as field errors.
func SetPromoteFrom(ctx context.Context, st *store.Store, a Actor, enqueue Enqueue, appID, env, source string, expectedRevision *int64) (PromoteFromResult, error) {
	saved, _, err := savedmanifest.Current(ctx, st, a.TeamID, appID)
	if err != nil {
		return PromoteFromResult{}, err
	}
	declared := false
	if saved != nil {
		_, declared = saved.Spec.Environments[env]
	}
	if !declared {
		_, err := SetEnvironmentSource(ctx, st, a, appID, env, SourceOptions{PromoteFrom: source})
		return PromoteFromResult{}, err
	}
	if _, err := checkPromotionSourceByName(ctx, st, a, appID, env, source); err != nil {
		return PromoteFromResult{}, err
	}
	edit, err := editEnvironmentBlock(ctx, st, a, appID, env, func(b *manifest.EnvironmentBlock) error {
		b.PromoteFrom = source
		return nil
	})
	if err != nil {
		return PromoteFromResult{}, err
	}
	res, err := EditManifest(ctx, st, a, enqueue, appID, expectedRevision, func(m *manifest.Manifest) error {
		if err := edit(m); err != nil {
			return err
		}
		if _, ok := m.Spec.Environments[source]; !ok {
			m.Spec.Environments[source] = manifest.EnvironmentBlock{}
		}
		return nil
	}, false)
	return PromoteFromResult{Declared: true, Revision: res.Revision.Revision}, err
}

// checkPromotionSourceByName is checkPromotionSource for env by name.
func checkPromotionSourceByName(ctx context.Context, st *store.Store, a Actor, appID, env, source string) (store.Environment, error) {
	target, err := EnvironmentByName(ctx, st, a.TeamID, appID, env)
	if err != nil {
		return store.Environment{}, err
	}
	return checkPromotionSource(ctx, st, a, appID, target, source)
}
