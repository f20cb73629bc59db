package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/slipwayhq/slipway/savedmanifest"
	"github.com/slipwayhq/slipway/store"
)

// SourceOptions choose where an undeclared environment deploys from:
// exactly one of PromoteFrom (another environment's name) and Tracking
// (the saved manifest, or the branch spec.manifest names).
type SourceOptions struct {
	PromoteFrom string
	Tracking    bool
}

// SetEnvironmentSource changes where an environment the manifest does not
// declare deploys from, deploying nothing. Declared environments follow
// their block (environment_declared).
func SetEnvironmentSource(ctx context.Context, st *store.Store, a Actor, appID, envName string, opts SourceOptions) (store.Environment, error) {
	if (opts.PromoteFrom == "") == !opts.Tracking {
		return store.Environment{}, &InputError{Field: "promote_from", Code: "environment_source_conflict",
			Message: "give exactly one of --promote-from ENV and --tracking"}
	}
	var out store.Environment
	err := st.WithTx(ctx, func(tx *store.Store) error {
		env, err := EnvironmentByName(ctx, tx, a.TeamID, appID, envName) // previews follow their branch
		if err != nil {
			return err
		}
		if err := refuseDeclared(ctx, tx, a, appID, env); err != nil {
			return err
		}
		promote := ""
		if opts.PromoteFrom != "" {
			src, err := checkPromotionSource(ctx, tx, a, appID, env, opts.PromoteFrom)
			if err != nil {
				return err
			}
			promote = src.ID
		}
		if _, err := tx.LiveDeployment(ctx, a.TeamID, env.ID); err == nil {
			return busy(env)
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if promote == env.PromoteFrom {
			out = env
			return nil
		}
		if out, err = tx.UpdateEnvironment(ctx, a.TeamID, env.ID, store.EnvironmentUpdate{PromoteFrom: &promote}); err != nil {
			return err
		}
		return record(ctx, tx, a, "environment.source", "environment", env.ID, map[string]any{
			"name": env.Name, "promote_from": opts.PromoteFrom, "tracking": opts.Tracking,
		})
	})
	return out, err
}

func refuseDeclared(ctx context.Context, tx *store.Store, a Actor, appID string, env store.Environment) error {
	m, _, err := savedmanifest.Current(ctx, tx, a.TeamID, appID)
	var undecodable *savedmanifest.DecodeError
	if errors.As(err, &undecodable) {
		return nil // as before: a revision this version cannot read declares nothing
	}
	if err != nil || m == nil {
		return err
	}
	if _, ok := m.Spec.Environments[env.Name]; ok {
		return &InputError{Field: "environment", Code: "environment_declared",
			Message: fmt.Sprintf("the manifest declares %s: change its source with promote_from in [spec.environments.%s] and save", env.Name, env.Name)}
	}
	return nil
}

// checkPromotionSource resolves a source by name: another non-preview
// environment of the same application that does not, directly or through
// others, promote from env.
func checkPromotionSource(ctx context.Context, tx *store.Store, a Actor, appID string, env store.Environment, name string) (store.Environment, error) {
	src, err := tx.GetEnvironmentByName(ctx, a.TeamID, appID, name)
	if errors.Is(err, store.ErrNotFound) {
		return src, &InputError{Field: "promote_from", Code: "promotion_source_invalid",
			Message: fmt.Sprintf("the application has no environment %q to promote from", name)}
	}
	if err != nil {
		return src, err
	}
	if src.Kind == store.KindPreview {
		return src, &InputError{Field: "promote_from", Code: "promotion_source_invalid", Message: "previews cannot be promotion sources"}
	}
	seen := map[string]bool{}
	for cur := src; ; {
		if cur.ID == env.ID {
			return src, &InputError{Field: "promote_from", Code: "promotion_cycle",
				Message: fmt.Sprintf("%s would promote from itself through %s: pick a source that does not promote from it", env.Name, name)}
		}
		if cur.PromoteFrom == "" || seen[cur.ID] {
			return src, nil
		}
		seen[cur.ID] = true
		if cur, err = tx.GetEnvironment(ctx, a.TeamID, cur.PromoteFrom); err != nil {
			return src, err
		}
	}
}
