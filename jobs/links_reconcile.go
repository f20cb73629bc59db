package jobs

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"
	"github.com/slipwayhq/slipway/pipeline"
)

// LinksReconcileArgs converges a team's links between applications with
// what its environments deployed. It is inserted after every successful
// deployment and every teardown; running it again changes nothing.
type LinksReconcileArgs struct {
	TeamID string `json:"team_id"`
}

// Kind is the River job kind.
func (LinksReconcileArgs) Kind() string { return "links_reconcile" }

// InsertOpts: link changes talk to Docker; retry an unreachable engine.
func (LinksReconcileArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 25}
}

// LinksReconcileWorker is the River worker of LinksReconcileArgs.
type LinksReconcileWorker struct {
	river.WorkerDefaults[LinksReconcileArgs]
	// Pipeline supplies the store and the driver; nil in insert-only
	// processes.
	Pipeline *pipeline.Pipeline
}

// Timeout: removing a network waits for Swarm to release it.
func (w *LinksReconcileWorker) Timeout(*river.Job[LinksReconcileArgs]) time.Duration {
	return 5 * time.Minute
}

// Work reconciles the team's links.
func (w *LinksReconcileWorker) Work(ctx context.Context, job *river.Job[LinksReconcileArgs]) error {
	if w.Pipeline == nil {
		return errors.New("links reconcile: this process has no pipeline to work jobs with")
	}
	_, err := w.Pipeline.ReconcileLinks(ctx, job.Args.TeamID)
	return riverError(err)
}
