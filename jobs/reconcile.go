package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river"
	"github.com/slipwayhq/slipway/pipeline"
)

// ReconcileArgs repairs drift: every environment's services are compared,
// field by field, with the deployment it should run, and changed back.
type ReconcileArgs struct{}

// Kind is the River job kind.
func (ReconcileArgs) Kind() string { return "reconcile" }

// ReconcileInterval is reconciliation.scan_interval_seconds' default.
const ReconcileInterval = 60 * time.Second

// ReconcileWorker runs ReconcileArgs.
type ReconcileWorker struct {
	river.WorkerDefaults[ReconcileArgs]
	Pipeline *pipeline.Pipeline
}

// Work scans every maintained deployment (pipeline.ReconcileAll).
func (w *ReconcileWorker) Work(ctx context.Context, _ *river.Job[ReconcileArgs]) error {
	return riverError(w.Pipeline.ReconcileAll(ctx))
}
