package service

import (
	"context"
	"fmt"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

// EnvironmentSetting is an environment block setting a field edit changes.
type EnvironmentSetting string

// The environment settings with their own field edit.
const (
	SettingVisibility EnvironmentSetting = "visibility"
	SettingRollback   EnvironmentSetting = "rollback"
)

// EditEnvironmentSetting returns the edit setting an environment's
// visibility or rollback; value "" removes the setting (the default).
func EditEnvironmentSetting(ctx context.Context, st *store.Store, a Actor, appID, env string, setting EnvironmentSetting, value string) (func(*manifest.Manifest) error, error) {
	return editEnvironmentBlock(ctx, st, a, appID, env, func(b *manifest.EnvironmentBlock) error {
		switch setting {
		case SettingVisibility:
			b.Visibility = value
		case SettingRollback:
			b.Rollback = value
		default:
			return fmt.Errorf("unknown environment setting %q", setting)
		}
		return nil
	})
}

// editEnvironmentBlock returns an edit changing the block of an existing
// environment (environment_unknown otherwise: field edits never declare
// environments). When the manifest declares none yet, it also adds an
// empty block for every other existing environment, so the edit leaves
// none of them undeclared.
func editEnvironmentBlock(ctx context.Context, st *store.Store, a Actor, appID, env string, change func(*manifest.EnvironmentBlock) error) (func(*manifest.Manifest) error, error) {
	envs, err := st.ListEnvironments(ctx, a.TeamID, appID)
	if err != nil {
		return nil, err
	}
	var names []string
	found := false
	for _, e := range envs {
		if e.Kind != store.KindEnvironment {
			continue
		}
		names = append(names, e.Name)
		found = found || e.Name == env
	}
	if !found {
		return nil, &InputError{Field: "env", Code: "environment_unknown", Message: fmt.Sprintf("the application has no environment %q", env)}
	}
	return func(m *manifest.Manifest) error {
		if len(m.Spec.Environments) == 0 {
			m.Spec.Environments = map[string]manifest.EnvironmentBlock{}
			for _, n := range names {
				m.Spec.Environments[n] = manifest.EnvironmentBlock{}
			}
		}
		block := m.Spec.Environments[env]
		if err := change(&block); err != nil {
			return err
		}
		m.Spec.Environments[env] = block
		return nil
	}, nil
}
