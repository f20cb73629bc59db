package service

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/store"
)

// DeletedEnvironment is what deleting an environment removed and what it
// keeps: environment volumes are retained (listed by name once the worker
// tore the environment down, in its environment.teardown event).
type DeletedEnvironment struct {
	Environment store.Environment
	// VolumesRetained is true for environments (their named volumes stay
	// in Docker) and false for previews, whose volumes are removed.
	VolumesRetained bool
}

// DeleteEnvironment deletes one of the application's environments (never
// a preview: Previews.Delete removes those) and queues the teardown of
// what runs for it. It refuses an
// environment the saved manifest declares (environment_declared: remove
// its block instead), one other environments promote from
// (promotion_source_in_use) and one with a deployment requested or running
// (application_busy): nothing is cancelled on the caller's behalf.
func DeleteEnvironment(ctx context.Context, st *store.Store, a Actor, enqueue Enqueue, appID, envName string) (DeletedEnvironment, error) {
	return deleteEnvironment(ctx, st, a, enqueue, appID, func(tx *store.Store) (store.Environment, error) {
		return EnvironmentByName(ctx, tx, a.TeamID, appID, envName)
	})
}

// DeletePreviewNow deletes the preview with that slug the way
// DeleteEnvironment deletes an environment, refusing one with a deployment
// requested or running: the dashboard's way on a server without preview
// machinery (which lists and deletes previews but runs no Previews).
func DeletePreviewNow(ctx context.Context, st *store.Store, a Actor, enqueue Enqueue, appID, slug string) (DeletedEnvironment, error) {
	return deleteEnvironment(ctx, st, a, enqueue, appID, func(tx *store.Store) (store.Environment, error) {
		return tx.GetPreviewBySlug(ctx, a.TeamID, appID, slug)
	})
}

// deleteEnvironment deletes the environment or preview find resolves in
// the transaction.
func deleteEnvironment(ctx context.Context, st *store.Store, a Actor, enqueue Enqueue, appID string, find func(tx *store.Store) (store.Environment, error)) (DeletedEnvironment, error) {
	var out DeletedEnvironment
	err := st.WithTx(ctx, func(tx *store.Store) error {
		env, err := find(tx)
		if err != nil {
			return err
		}
		if err := refuseDeclared(ctx, tx, a, appID, env); err != nil {
			var in *InputError
			if errors.As(err, &in) && in.Code == "environment_declared" {
				in.Message = fmt.Sprintf("the manifest declares %s: remove [spec.environments.%s] from it and save to delete the environment", env.Name, env.Name)
			}
			return err
		}
		all, err := tx.ListEnvironments(ctx, a.TeamID, appID)
		if err != nil {
			return err
		}
		var dependents []string
		for _, e := range all {
			if e.PromoteFrom == env.ID {
				dependents = append(dependents, e.Name)
			}
		}
		if len(dependents) > 0 {
			return &InputError{Field: "environment", Code: "promotion_source_in_use",
				Message: fmt.Sprintf("%s promote from %s: change their source (env source) or delete them first", strings.Join(dependents, ", "), env.Name)}
		}
		if _, err := tx.LiveDeployment(ctx, a.TeamID, env.ID); err == nil {
			return busy(env)
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		// The job is queued before the row goes: it works from the ids and
		// kind captured here, and commits (or not) with the deletion.
		if err := enqueueTeardown(ctx, tx, enqueue, env); err != nil {
			return err
		}
		if err := tx.DeleteEnvironment(ctx, a.TeamID, env.ID); err != nil {
			return err
		}
		out = DeletedEnvironment{Environment: env, VolumesRetained: env.Kind != store.KindPreview}
		return record(ctx, tx, a, "environment.delete", "environment", env.ID, map[string]any{
			"name": env.Name, "kind": string(env.Kind), "volumes_retained": out.VolumesRetained,
		})
	})
	return out, err
}

// enqueueTeardown queues the removal of what runs for env in tx.
func enqueueTeardown(ctx context.Context, tx *store.Store, enqueue Enqueue, env store.Environment) error {
	err := enqueue(ctx, tx, jobs.EnvironmentTeardownArgs{
		TeamID: env.TeamID, EnvironmentID: env.ID, Name: env.Name, Preview: env.Kind == store.KindPreview,
	})
	if err != nil {
		return fmt.Errorf("queue teardown of %s: %w", env.Name, err)
	}
	return nil
}
