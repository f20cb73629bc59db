package jobs

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"
	"github.com/slipwayhq/slipway/pipeline"
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

// PreviewDeleteWorker is the River worker of PreviewDeleteArgs.
type PreviewDeleteWorker struct {
	river.WorkerDefaults[PreviewDeleteArgs]
	// Pipeline supplies the driver, routes hook and store; nil in
	// insert-only processes.
	Pipeline *pipeline.Pipeline
}

// Timeout: removal waits for stop grace periods (see teardownTimeout).
func (w *PreviewDeleteWorker) Timeout(*river.Job[PreviewDeleteArgs]) time.Duration {
	return teardownTimeout
}

// Work deletes the preview.
func (w *PreviewDeleteWorker) Work(ctx context.Context, job *river.Job[PreviewDeleteArgs]) error {
	if w.Pipeline == nil || w.Pipeline.Store == nil {
		return errors.New("preview delete: this process has no pipeline to work jobs with")
	}
	return riverError(w.Pipeline.DeletePreview(ctx, job.Args.TeamID, job.Args.EnvironmentID))
}
