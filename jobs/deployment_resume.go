package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/store"
)

// DeploymentResumeArgs finds deployments whose worker died (its lease
// expired) and queues them again, so a killed worker's deployment finishes
// without waiting for River's hour-long stuck-job rescue.
type DeploymentResumeArgs struct{}

// Kind is the River job kind.
func (DeploymentResumeArgs) Kind() string { return "deployment_resume" }

// ResumeInterval is how often orphaned deployments are looked for.
const ResumeInterval = 10 * time.Second

// DeploymentResumeWorker runs DeploymentResumeArgs.
type DeploymentResumeWorker struct {
	river.WorkerDefaults[DeploymentResumeArgs]
	Store *store.Store
	// Enqueue inserts in tx's transaction; nil uses the working client.
	Enqueue func(ctx context.Context, tx *store.Store, args river.JobArgs) error
}

// Work queues every orphaned deployment once; the deployment's steps make
// the new job carry on where the dead worker stopped.
func (w *DeploymentResumeWorker) Work(ctx context.Context, _ *river.Job[DeploymentResumeArgs]) error {
	enqueue := w.Enqueue
	if enqueue == nil {
		enqueue = InsertFromWorker
	}
	return w.Store.WithTx(ctx, func(tx *store.Store) error {
		refs, err := tx.ListOrphanedDeployments(ctx)
		if err != nil {
			return err
		}
		for _, ref := range refs {
			if err := enqueue(ctx, tx, DeployArgs{TeamID: ref.TeamID, DeploymentID: ref.ID, Resume: ref.Resumes}); err != nil {
				return err
			}
		}
		return nil
	})
}
