package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/store"
)

// PreviewDeleteArgs asks a worker to remove a preview marked for deletion:
// what it runs, its routes and every volume its deployments created. The
// preview's row goes last, once no volume is left, so a deletion that
// cannot remove one is retried and the preview stays listed meanwhile.
type PreviewDeleteArgs struct {
	TeamID        string `json:"team_id"`
	EnvironmentID string `json:"environment_id"`
}

// Kind is the River job kind.
func (PreviewDeleteArgs) Kind() string { return "preview_delete" }

// InsertOpts: like a teardown, on the deploy queue with many attempts.
func (PreviewDeleteArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		Queue:       QueueDeploy,
		MaxAttempts: 25,
		UniqueOpts:  river.UniqueOpts{ByArgs: true},
	}
}

// VolumeChecker tells whether a named volume exists (*swarm.Driver).
type VolumeChecker interface {
	VolumeExists(ctx context.Context, name string) (bool, error)
}

// PreviewDeleteWorker is the River worker of PreviewDeleteArgs.
type PreviewDeleteWorker struct {
	river.WorkerDefaults[PreviewDeleteArgs]
	// Pipeline supplies the driver, routes hook and store; nil in
	// insert-only processes.
	Pipeline *Pipeline
}

// Timeout: removal waits for stop grace periods (see teardownTimeout).
func (w *PreviewDeleteWorker) Timeout(*river.Job[PreviewDeleteArgs]) time.Duration {
	return teardownTimeout
}

// Work deletes the preview.
func (w *PreviewDeleteWorker) Work(ctx context.Context, job *river.Job[PreviewDeleteArgs]) error {
	return w.Delete(ctx, job.Args)
}

// Delete waits for a running deployment of the preview to finish, tears
// the preview down with its volumes, checks that no inventoried volume is
// left and only then deletes the preview's row (with its deployments,
// generated secrets and hostname reservations). A preview that is already
// gone is deleted.
func (w *PreviewDeleteWorker) Delete(ctx context.Context, a PreviewDeleteArgs) error {
	p := w.Pipeline
	if p == nil || p.Store == nil {
		return errors.New("preview delete: this process has no pipeline to work jobs with")
	}
	st := p.Store
	env, err := st.GetEnvironment(ctx, a.TeamID, a.EnvironmentID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if env.Kind != store.KindPreview || env.DeletingAt == nil {
		return river.JobCancel(fmt.Errorf("preview delete: %s is not a preview being deleted", env.ID))
	}
	// The service cancels a waiting deployment; a running one finishes first,
	// since it may be creating the very objects about to be removed.
	if _, err := st.LiveDeployment(ctx, a.TeamID, env.ID); err == nil {
		return river.JobSnooze(5 * time.Second)
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	teardown := &EnvironmentTeardownWorker{Pipeline: p}
	if _, err := teardown.Teardown(ctx, EnvironmentTeardownArgs{
		TeamID: a.TeamID, EnvironmentID: env.ID, Name: env.Name, Preview: true,
	}); err != nil {
		return fmt.Errorf("preview delete %s: %w", env.Name, err)
	}
	inventory, err := st.ListPreviewVolumes(ctx, a.TeamID, env.ID)
	if err != nil {
		return err
	}
	if len(inventory) > 0 {
		checker, ok := p.Driver.(VolumeChecker)
		if !ok {
			return river.JobCancel(fmt.Errorf("preview delete: driver %T cannot check volumes", p.Driver))
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
		if err := tx.DeleteEnvironment(ctx, a.TeamID, env.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		_, err := tx.RecordEvent(ctx, a.TeamID, store.EventParams{
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
