package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

// ManifestError is a manifest that did not decode or validate: every error
// with its field path, code and, when known, line and column. The API
// answers it with 422 manifest_validation_failed.
type ManifestError struct {
	Errors manifest.Errors
}

func (e *ManifestError) Error() string {
	return fmt.Sprintf("the manifest has %d error(s): %s", len(e.Errors), e.Errors.Error())
}

// Enqueue inserts a River job in the transaction of tx (jobs.Client.InsertTx).
type Enqueue func(ctx context.Context, tx *store.Store, args river.JobArgs) error

// ApplyOptions tune ApplyManifest.
type ApplyOptions struct {
	// Format is "toml" (default) or "json".
	Format string
	// ExpectedRevision, when set, makes the save fail with
	// generation_conflict if someone saved another revision since.
	ExpectedRevision *int64
	// Deploy requests a deployment of every declared environment that
	// builds (promoted ones wait for a promotion).
	Deploy bool
	// AllowFileURLs accepts file:// repository URLs: the operator's
	// [git] allow_file_urls. Off, they are file_url_disabled errors.
	AllowFileURLs bool
}

// ApplyResult is what an apply saved.
type ApplyResult struct {
	Application store.Application
	Revision    store.ManifestRevision
	// Created is true when the apply created the application.
	Created bool
	// Unchanged is true when the manifest equals the current revision; no
	// revision was saved.
	Unchanged bool
	// CreatedEnvironments lists environments the manifest declared that did
	// not exist.
	CreatedEnvironments []string
	// Undeclared lists existing environments the manifest no longer declares.
	Undeclared  []string
	Warnings    manifest.Errors
	Deployments []store.Deployment
}

// DecodeManifest decodes and validates a submitted manifest, returning every
// problem at once as a *ManifestError.
func DecodeManifest(data []byte, format string) (*manifest.Manifest, manifest.Errors, error) {
	if format == "" {
		format = "toml"
	}
	m, err := manifest.Decode(data, format)
	if err != nil {
		var errs manifest.Errors
		if errors.As(err, &errs) {
			return nil, nil, &ManifestError{Errors: errs}
		}
		return nil, nil, &ManifestError{Errors: manifest.Errors{{Code: "manifest_invalid", Message: err.Error()}}}
	}
	if errs := manifest.Validate(m, manifest.ValidateOptions{}); len(errs) > 0 {
		if format == "toml" {
			errs = errs.WithPositions(manifest.Positions(data))
		}
		return nil, nil, &ManifestError{Errors: errs}
	}
	return m, manifest.Warnings(m), nil
}

// ApplyManifest saves a manifest as the next revision of the application
// its metadata names (creating the application), converges the declared
// environments, and deploys them when asked. Nothing is saved unless the
// whole manifest is valid, and everything happens in one transaction with
// the deployment jobs.
func ApplyManifest(ctx context.Context, st *store.Store, a Actor, enqueue Enqueue, data []byte, opts ApplyOptions) (ApplyResult, error) {
	m, warnings, err := DecodeManifest(data, opts.Format)
	if err != nil {
		return ApplyResult{}, err
	}
	if errs := manifest.FileURLErrors(m); len(errs) > 0 && !opts.AllowFileURLs {
		if opts.Format == "" || opts.Format == "toml" {
			errs = errs.WithPositions(manifest.Positions(data))
		}
		return ApplyResult{}, &ManifestError{Errors: errs}
	}
	normalized, err := json.Marshal(m)
	if err != nil {
		return ApplyResult{}, fmt.Errorf("encode manifest: %w", err)
	}
	format := opts.Format
	if format == "" {
		format = "toml"
	}
	res := ApplyResult{Warnings: warnings}
	err = st.WithTx(ctx, func(tx *store.Store) error {
		app, err := tx.GetApplicationByName(ctx, a.TeamID, m.Metadata.Name)
		if errors.Is(err, store.ErrNotFound) {
			if opts.ExpectedRevision != nil && *opts.ExpectedRevision != 0 {
				return &InputError{Field: "expected_revision", Code: "generation_conflict",
					Message: fmt.Sprintf("application %q does not exist, so it has no revision %d", m.Metadata.Name, *opts.ExpectedRevision)}
			}
			app, err = tx.CreateApplication(ctx, a.TeamID, m.Metadata.Name)
			res.Created = true
			if err == nil {
				err = record(ctx, tx, a, "application.create", "application", app.ID, map[string]any{"name": app.Name})
			}
		}
		if err != nil {
			return err
		}
		res.Application = app
		if err := ValidateStoredSecretNames(ctx, tx, a.TeamID, app.ID, m, data, format); err != nil {
			return err
		}

		var previous *manifest.Manifest
		current, err := tx.GetCurrentManifestRevision(ctx, a.TeamID, app.ID)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return err
		default:
			if opts.ExpectedRevision != nil && *opts.ExpectedRevision != current.Revision {
				return &InputError{Field: "expected_revision", Code: "generation_conflict",
					Message: fmt.Sprintf("revision %d was saved since revision %d: reload, merge and save again", current.Revision, *opts.ExpectedRevision)}
			}
			previous, _ = manifest.Decode(current.Manifest, "json")
			if sameJSON(current.Manifest, normalized) {
				res.Unchanged, res.Revision = true, current
			}
		}
		if !res.Unchanged {
			params := store.RevisionParams{Manifest: normalized, Source: string(data), SourceFormat: format, Author: a.String()}
			if opts.ExpectedRevision != nil {
				params.BaseRevision = opts.ExpectedRevision
			}
			rev, err := tx.CreateManifestRevision(ctx, a.TeamID, app.ID, params)
			if err != nil {
				var c *store.ConflictError
				if errors.As(err, &c) {
					return &InputError{Field: "expected_revision", Code: "generation_conflict", Message: "another revision was saved meanwhile: reload, merge and save again"}
				}
				return err
			}
			res.Revision = rev
			if err := record(ctx, tx, a, "manifest.save", "application", app.ID, map[string]any{"revision": rev.Revision}); err != nil {
				return err
			}
		}
		if err := afterSave(ctx, tx, a, enqueue, app, previous, m, opts.Deploy, &res); err != nil {
			return err
		}
		envWarnings, err := PlanWarnings(ctx, tx, a.TeamID, app.ID, m)
		res.Warnings = append(append(manifest.Errors{}, warnings...), envWarnings...)
		return err
	})
	return res, err
}

// afterSave is what every save of a manifest does next, in its
// transaction: converge the declared environments, reserve their
// hostnames, and deploy every environment that builds when asked.
func afterSave(ctx context.Context, tx *store.Store, a Actor, enqueue Enqueue, app store.Application, previous, m *manifest.Manifest, deploy bool, res *ApplyResult) error {
	if err := checkSyncPermission(a, previous, m); err != nil {
		return err
	}
	envs, err := convergeEnvironments(ctx, tx, a, app, previous, m, res)
	if err != nil {
		return err
	}
	if err := checkSaveQuotas(ctx, tx, a, previous, m, envs, res); err != nil {
		return err
	}
	if err := reserveHostnames(ctx, tx, a, app, m, envs); err != nil {
		return err
	}
	if !deploy {
		return nil
	}
	for _, env := range envs {
		if env.PromoteFrom != "" {
			continue
		}
		d, err := requestDeployment(ctx, tx, a, enqueue, env, res.Revision.Revision, store.OriginBuild, "")
		if err != nil {
			return err
		}
		res.Deployments = append(res.Deployments, d)
	}
	return nil
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

// convergeEnvironments makes the application's environments those the
// manifest declares: missing ones are created (not deployed), source
// settings follow the blocks, undeclared ones are kept and reported. An
// application that declares none gets a production environment. It returns
// the environments a deploy of this manifest targets.
func convergeEnvironments(ctx context.Context, tx *store.Store, a Actor, app store.Application, previous, m *manifest.Manifest, res *ApplyResult) ([]store.Environment, error) {
	existing, err := tx.ListEnvironments(ctx, a.TeamID, app.ID)
	if err != nil {
		return nil, err
	}
	byName := map[string]store.Environment{}
	for _, e := range existing {
		if e.Kind == store.KindEnvironment {
			byName[e.Name] = e
		}
	}
	declared := make([]string, 0, len(m.Spec.Environments))
	for name := range m.Spec.Environments {
		declared = append(declared, name)
	}
	sort.Strings(declared)
	if len(declared) == 0 {
		if len(byName) == 0 {
			declared = []string{"production"}
		} else {
			// Nothing declared: every existing environment deploys the saved manifest.
			var out []store.Environment
			for _, e := range existing {
				if e.Kind == store.KindEnvironment {
					out = append(out, e)
				}
			}
			return out, nil
		}
	}
	// Create first, so promote_from can name any declared environment by id.
	for _, name := range declared {
		if _, ok := byName[name]; ok {
			continue
		}
		block := m.Spec.Environments[name]
		env, err := tx.CreateEnvironment(ctx, a.TeamID, store.EnvironmentParams{
			ApplicationID: app.ID, Kind: store.KindEnvironment, Name: name, Slug: name,
			Branch: block.Branch, Commit: block.Commit, Sync: block.Sync != nil && *block.Sync,
			Visibility: block.Visibility, Rollback: block.Rollback,
		})
		if err != nil {
			return nil, err
		}
		byName[name] = env
		res.CreatedEnvironments = append(res.CreatedEnvironments, name)
		if err := record(ctx, tx, a, "environment.create", "environment", env.ID, map[string]any{"name": name, "declared": true}); err != nil {
			return nil, err
		}
	}
	var targets []store.Environment
	for _, name := range declared {
		env := byName[name]
		block, declaredHere := m.Spec.Environments[name]
		if declaredHere {
			upd, changed := sourceUpdate(env, block, previous, name, byName)
			if changed {
				if env, err = tx.UpdateEnvironment(ctx, a.TeamID, env.ID, upd); err != nil {
					return nil, err
				}
			}
		}
		targets = append(targets, env)
	}
	for name := range byName {
		if _, ok := m.Spec.Environments[name]; !ok && len(m.Spec.Environments) > 0 {
			res.Undeclared = append(res.Undeclared, name)
		}
	}
	sort.Strings(res.Undeclared)
	return targets, nil
}

// sourceUpdate applies a block's source settings (branch, commit,
// promote_from, sync) when it sets them, or when the previous saved block
// did (removing them returns the environment to the default); visibility
// and rollback follow the block.
func sourceUpdate(env store.Environment, block manifest.EnvironmentBlock, previous *manifest.Manifest, name string, byName map[string]store.Environment) (store.EnvironmentUpdate, bool) {
	var upd store.EnvironmentUpdate
	changed := false
	setsSource := block.Branch != "" || block.Commit != "" || block.PromoteFrom != "" || block.Sync != nil
	if previous != nil {
		if prev, ok := previous.Spec.Environments[name]; ok {
			setsSource = setsSource || prev.Branch != "" || prev.Commit != "" || prev.PromoteFrom != "" || prev.Sync != nil
		}
	}
	if setsSource {
		promote := ""
		if block.PromoteFrom != "" {
			promote = byName[block.PromoteFrom].ID
		}
		sync := block.Sync != nil && *block.Sync
		if env.Branch != block.Branch {
			upd.Branch, changed = &block.Branch, true
		}
		if env.Commit != block.Commit {
			upd.Commit, changed = &block.Commit, true
		}
		if env.PromoteFrom != promote {
			upd.PromoteFrom, changed = &promote, true
		}
		if env.Sync != sync {
			upd.Sync, changed = &sync, true
		}
	}
	if env.Visibility != block.Visibility {
		v := block.Visibility
		upd.Visibility, changed = &v, true
	}
	if env.Rollback != block.Rollback {
		r := block.Rollback
		upd.Rollback, changed = &r, true
	}
	return upd, changed
}

// RequestDeployment asks for a deployment of the environment's saved
// manifest; the worker picks it up. A queued request of the same
// environment is superseded.
func RequestDeployment(ctx context.Context, st *store.Store, a Actor, enqueue Enqueue, appID, envName string) (store.Deployment, error) {
	var d store.Deployment
	err := st.WithTx(ctx, func(tx *store.Store) error {
		env, err := EnvironmentByName(ctx, tx, a.TeamID, appID, envName)
		if err != nil {
			return err
		}
		if env.PromoteFrom != "" {
			return &InputError{Field: "environment", Code: "environment_promoted",
				Message: fmt.Sprintf("environment %s only receives releases promoted from another environment: use `slipway env promote`", env.Name)}
		}
		rev, err := tx.GetCurrentManifestRevision(ctx, a.TeamID, appID)
		if errors.Is(err, store.ErrNotFound) {
			return &InputError{Field: "application", Code: "manifest_missing", Message: "the application has no saved manifest yet: apply one first"}
		}
		if err != nil {
			return err
		}
		d, err = requestDeployment(ctx, tx, a, enqueue, env, rev.Revision, store.OriginBuild, "")
		return err
	})
	return d, err
}

// RestoreDeployment deploys an earlier deployment of the environment again,
// exactly as it ran (same rendered manifest, images and secret versions).
func RestoreDeployment(ctx context.Context, st *store.Store, a Actor, enqueue Enqueue, deploymentID string) (store.Deployment, error) {
	var d store.Deployment
	err := st.WithTx(ctx, func(tx *store.Store) error {
		src, err := tx.GetDeployment(ctx, a.TeamID, deploymentID)
		if err != nil {
			return err
		}
		if src.RenderedManifest == nil {
			return &InputError{Field: "deployment", Code: "restore_source_invalid", Message: "that deployment never captured a manifest, so there is nothing to restore"}
		}
		env, err := tx.GetEnvironment(ctx, a.TeamID, src.EnvironmentID)
		if err != nil {
			return err
		}
		d, err = requestDeployment(ctx, tx, a, enqueue, env, src.Revision, store.OriginRestore, src.ID)
		return err
	})
	return d, err
}

// CancelDeployment stops a deployment that has not finished. Like every
// other state change it goes through jobs.NotifyGitHubTx, so a pull
// request's comment and the commit's status show the cancellation.
func CancelDeployment(ctx context.Context, st *store.Store, a Actor, enqueue Enqueue, deploymentID string) (store.Deployment, error) {
	var d store.Deployment
	err := st.WithTx(ctx, func(tx *store.Store) error {
		var err error
		live := []store.DeploymentState{store.StateRequested, store.StateCapturing, store.StatePreparing, store.StateRunningJobs, store.StateRollingOut}
		d, err = tx.TransitionDeployment(ctx, a.TeamID, deploymentID, live, store.StateCancelled)
		if errors.Is(err, store.ErrInvalidTransition) {
			return &InputError{Field: "deployment", Code: "deployment_finished", Message: "the deployment has already finished"}
		}
		if err != nil {
			return err
		}
		if err := jobs.NotifyGitHubTx(ctx, tx, enqueue, d); err != nil {
			return fmt.Errorf("queue GitHub notification: %w", err)
		}
		return record(ctx, tx, a, "deployment.cancel", "deployment", d.ID, nil)
	})
	return d, err
}

func requestDeployment(ctx context.Context, tx *store.Store, a Actor, enqueue Enqueue, env store.Environment, revision int64, origin store.Origin, restoredFrom string) (store.Deployment, error) {
	d, err := tx.CreateDeployment(ctx, a.TeamID, store.DeploymentParams{
		EnvironmentID: env.ID, Revision: revision, Origin: origin, RestoredFrom: restoredFrom, Actor: a.String(),
	})
	if err != nil {
		return store.Deployment{}, err
	}
	if err := enqueue(ctx, tx, jobs.DeployArgs{TeamID: a.TeamID, DeploymentID: d.ID}); err != nil {
		return store.Deployment{}, fmt.Errorf("queue deployment: %w", err)
	}
	if err := record(ctx, tx, a, "deployment.request", "deployment", d.ID, map[string]any{
		"environment": env.Name, "revision": revision, "origin": string(origin),
	}); err != nil {
		return store.Deployment{}, err
	}
	return d, nil
}
