package service

import (
	"context"
	"fmt"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/savedmanifest"
	"github.com/slipwayhq/slipway/store"
)

// BlockSetsSource reports whether m's block for the environment name sets
// its source (branch, commit, promote_from or sync): env branch and env
// sync then refuse it, and the dashboard shows them read-only.
func BlockSetsSource(m *manifest.Manifest, name string) bool {
	if m == nil {
		return false
	}
	b, ok := m.Spec.Environments[name]
	return ok && (b.Branch != "" || b.Commit != "" || b.PromoteFrom != "" || b.Sync != nil)
}

// refuseSourceDeclared refuses to change the source of an environment
// whose block in the saved manifest sets it (environment_declared).
func refuseSourceDeclared(ctx context.Context, tx *store.Store, a Actor, appID string, env store.Environment) error {
	m, _, err := savedmanifest.Current(ctx, tx, a.TeamID, appID)
	if err != nil || !BlockSetsSource(m, env.Name) {
		return err
	}
	return &InputError{Field: "environment", Code: "environment_declared",
		Message: fmt.Sprintf("[spec.environments.%s] sets its source: change branch, commit or sync there and save", env.Name)}
}

// SetEnvironmentSync turns background sync of an environment on or off:
// when on, pushes to its (unpinned) branch deploy it. It needs a manifest
// repository (manifest_repository_required) and deploys nothing.
func SetEnvironmentSync(ctx context.Context, st *store.Store, a Actor, appID, envName string, on bool) (store.Environment, error) {
	var out store.Environment
	err := st.WithTx(ctx, func(tx *store.Store) error {
		env, err := EnvironmentByName(ctx, tx, a.TeamID, appID, envName)
		if err != nil {
			return err
		}
		m, _, err := savedmanifest.Current(ctx, tx, a.TeamID, appID)
		if err != nil {
			return err
		}
		if BlockSetsSource(m, env.Name) {
			return refuseSourceDeclared(ctx, tx, a, appID, env)
		}
		if on && (m == nil || m.Spec.Manifest == nil || m.Spec.Manifest.Repository == nil) {
			return &InputError{Field: "sync", Code: "manifest_repository_required",
				Message: "sync needs a manifest repository: connect one first"}
		}
		if env.Sync == on {
			out = env
			return nil
		}
		if out, err = tx.UpdateEnvironment(ctx, a.TeamID, env.ID, store.EnvironmentUpdate{Sync: &on}); err != nil {
			return err
		}
		return record(ctx, tx, a, "environment.sync", "environment", env.ID, map[string]any{"name": env.Name, "sync": on})
	})
	return out, err
}

// SetEnvironmentBranchSync sets the branch an environment follows (its
// head: any pinned commit is dropped) and its sync in one transaction, as
// env branch then env sync would, recording both events: either both
// change or, when one is refused, neither does.
func SetEnvironmentBranchSync(ctx context.Context, st *store.Store, a Actor, appID, envName, branch string, sync bool) (store.Environment, error) {
	var out store.Environment
	err := st.WithTx(ctx, func(tx *store.Store) error {
		if _, err := SetEnvironmentBranch(ctx, tx, a, appID, envName, branch, ""); err != nil {
			return err
		}
		var err error
		out, err = SetEnvironmentSync(ctx, tx, a, appID, envName, sync)
		return err
	})
	return out, err
}
