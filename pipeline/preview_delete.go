package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/slipwayhq/slipway/store"
)

// VolumeChecker tells whether a named volume exists (*swarm.Driver).
type VolumeChecker interface {
	VolumeExists(ctx context.Context, name string) (bool, error)
}

// DeletePreview waits for a running deployment of the preview to finish, tears
// the preview down with its volumes, checks that no inventoried volume is
// left and only then deletes the preview's row (with its deployments,
// generated secrets and hostname reservations). A preview that is already
// gone is deleted.
func (p *Pipeline) DeletePreview(ctx context.Context, teamID, environmentID string) error {
	st := p.Store
	env, err := st.GetEnvironment(ctx, teamID, environmentID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if env.Kind != store.KindPreview || env.DeletingAt == nil {
		return &PermanentError{Err: fmt.Errorf("preview delete: %s is not a preview being deleted", env.ID)}
	}
	// The service cancels a waiting deployment; a running one finishes first,
	// since it may be creating the very objects about to be removed.
	if _, err := st.LiveDeployment(ctx, teamID, env.ID); err == nil {
		return &WaitError{After: 5 * time.Second, Reason: "a deployment of the preview runs"}
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if _, err := p.TeardownEnvironment(ctx, Teardown{
		TeamID: teamID, EnvironmentID: env.ID, Name: env.Name, Preview: true,
	}); err != nil {
		return fmt.Errorf("preview delete %s: %w", env.Name, err)
	}
	inventory, err := st.ListPreviewVolumes(ctx, teamID, env.ID)
	if err != nil {
		return err
	}
	if len(inventory) > 0 {
		checker, ok := p.Driver.(VolumeChecker)
		if !ok {
			return &PermanentError{Err: fmt.Errorf("preview delete: driver %T cannot check volumes", p.Driver)}
		}
		for _, name := range inventory {
			exists, err := checker.VolumeExists(ctx, name)
			if err != nil {
				return fmt.Errorf("preview delete %s: %w", env.Name, err)
			}
			if exists {
				return fmt.Errorf("preview delete %s: volume %s is still there; retrying", env.Name, name)
			}
		}
	}
	return st.WithTx(ctx, func(tx *store.Store) error {
		if err := tx.DeleteEnvironment(ctx, teamID, env.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		_, err := tx.RecordEvent(ctx, teamID, store.EventParams{
			Actor: "system", Verb: "preview.deleted", ObjectType: "application", ObjectID: env.ApplicationID,
			Details: map[string]any{"preview": env.Name, "environment_id": env.ID, "branch": env.Branch, "slot": env.Slot, "volumes": nonNil(inventory)},
		})
		return err
	})
}

// inventoryPreviewVolumes records the volumes a preview deployment is about
// to ensure in the preview's inventory.
func (r *run) inventoryPreviewVolumes(ctx context.Context) error {
	if r.env.Kind != store.KindPreview || len(r.desired.Volumes) == 0 {
		return nil
	}
	names := make([]string, 0, len(r.desired.Volumes))
	for _, v := range r.desired.Volumes {
		names = append(names, v.Name)
	}
	return r.p.Store.RecordPreviewVolumes(ctx, r.d.TeamID, r.env.ID, names)
}
