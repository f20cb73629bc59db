package service

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/quota"
	"github.com/slipwayhq/slipway/savedmanifest"
	"github.com/slipwayhq/slipway/store"
)

// CreateOptions are the settings of an environment created by hand.
type CreateOptions struct {
	// Branch is the branch a repository-backed environment follows; ""
	// follows the branch spec.manifest names.
	Branch string
	// Hostname is the environment's own hostname for the saved manifest's
	// one route with a literal hostname, which GiveOwnHostnames then
	// saves; CreateEnvironment only checks it, so a hostname refused
	// creates nothing.
	Hostname string
}

// CreateEnvironment creates an environment the manifest does not declare,
// deploying nothing. A declared name belongs to its block, which creates
// it on save (environment_declared); a taken name or slug is a conflict.
// A branch must be a valid git branch name (branch_invalid), and only an
// application with a manifest repository has one to follow
// (manifest_repository_required).
func CreateEnvironment(ctx context.Context, st *store.Store, a Actor, appID, name string, opts CreateOptions) (store.Environment, error) {
	name = strings.TrimSpace(name)
	if err := CheckApplicationName(name); err != nil {
		return store.Environment{}, err
	}
	opts.Branch = strings.TrimSpace(opts.Branch)
	if opts.Branch != "" {
		if msg := checkBranchName(opts.Branch); msg != "" {
			return store.Environment{}, &InputError{Field: "branch", Code: "branch_invalid", Message: msg}
		}
	}
	var out store.Environment
	err := st.WithTx(ctx, func(tx *store.Store) error {
		saved, _, err := savedmanifest.Current(ctx, tx, a.TeamID, appID)
		if err != nil {
			return err
		}
		if err := refuseDeclaredName(saved, "name", name, "create"); err != nil {
			return err
		}
		if saved != nil {
			if _, err := ownHostnames(saved, name, strings.TrimSpace(opts.Hostname)); err != nil {
				return err
			}
		}
		if opts.Branch != "" && (saved == nil || saved.Spec.Manifest == nil) {
			return &InputError{Field: "branch", Code: "manifest_repository_required",
				Message: "a branch needs a manifest repository: connect one (spec.manifest) or leave the branch out"}
		}
		out, err = tx.CreateEnvironment(ctx, a.TeamID, store.EnvironmentParams{
			ApplicationID: appID, Kind: store.KindEnvironment, Name: name, Slug: name, Branch: opts.Branch,
		})
		if err != nil {
			return conflictInput(err, fmt.Sprintf("the application already has an environment or preview named %q", name))
		}
		if err := quota.CheckCounts(ctx, tx, a.TeamID, quota.Add{Quota: quota.Environments, N: 1, Field: "name"}); err != nil {
			return quotaInput(err)
		}
		return record(ctx, tx, a, "environment.create", "environment", out.ID, map[string]any{"name": name, "branch": opts.Branch})
	})
	return out, err
}

// RenameEnvironment renames an environment the manifest does not declare,
// keeping its id and so its deployments, volumes and running Swarm
// objects (labelled by id); nothing is redeployed. It refuses a declared
// current or new name (environment_declared), and a manifest the
// environment deploys that has a block for either name
// (environment_configured): renaming would change which block applies.
func RenameEnvironment(ctx context.Context, st *store.Store, a Actor, appID, oldName, newName string) (store.Environment, error) {
	newName = strings.TrimSpace(newName)
	if err := CheckApplicationName(newName); err != nil {
		return store.Environment{}, err
	}
	var out store.Environment
	err := st.WithTx(ctx, func(tx *store.Store) error {
		env, err := EnvironmentByName(ctx, tx, a.TeamID, appID, oldName)
		if err != nil {
			return err
		}
		if env.Name == newName {
			out = env
			return nil
		}
		saved, _, err := savedmanifest.Current(ctx, tx, a.TeamID, appID)
		if err != nil {
			return err
		}
		if err := refuseDeclaredName(saved, "env", env.Name, "rename"); err != nil {
			return err
		}
		if err := refuseDeclaredName(saved, "name", newName, "rename to"); err != nil {
			return err
		}
		deployed, err := deployedManifest(ctx, tx, a, env, saved)
		if err != nil {
			return err
		}
		for _, n := range []string{env.Name, newName} {
			if deployed == nil {
				break
			}
			if _, ok := deployed.Spec.Environments[n]; ok {
				return &InputError{Field: "name", Code: "environment_configured",
					Message: fmt.Sprintf("the manifest %s deploys has a [spec.environments.%s] block: remove it, rename the environment, then add the block back under the new name", env.Name, n)}
			}
		}
		if out, err = tx.RenameEnvironment(ctx, a.TeamID, env.ID, newName); err != nil {
			return conflictInput(err, fmt.Sprintf("the application already has an environment or preview named %q", newName))
		}
		return record(ctx, tx, a, "environment.rename", "environment", env.ID, map[string]any{"from": env.Name, "to": newName})
	})
	return out, err
}

// refuseDeclaredName is environment_declared for a name the saved
// manifest declares: its block owns the environment's existence.
func refuseDeclaredName(saved *manifest.Manifest, field, name, verb string) error {
	if saved == nil {
		return nil
	}
	if _, ok := saved.Spec.Environments[name]; ok {
		return &InputError{Field: field, Code: "environment_declared",
			Message: fmt.Sprintf("the manifest declares %s, so its block decides whether it exists: cannot %s it by hand; edit [spec.environments.%s] and save instead", name, verb, name)}
	}
	return nil
}

// deployedManifest is the manifest env deploys: for a repository-backed
// application the one last fetched from the environment's branch (nil
// when it never fetched), otherwise the saved one.
func deployedManifest(ctx context.Context, tx *store.Store, a Actor, env store.Environment, saved *manifest.Manifest) (*manifest.Manifest, error) {
	if saved == nil || saved.Spec.Manifest == nil {
		return saved, nil
	}
	f, err := tx.LastDeploymentFetch(ctx, a.TeamID, env.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	format := "toml"
	if strings.EqualFold(path.Ext(f.ManifestPath), ".json") {
		format = "json"
	}
	m, err := manifest.Decode(f.Manifest, format)
	if err != nil {
		// An undecodable fetch never deployed: nothing in it configures env.
		return nil, nil
	}
	return m, nil
}
