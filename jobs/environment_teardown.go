package jobs

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"
	"github.com/slipwayhq/slipway/pipeline"
)

// EnvironmentTeardownArgs asks a worker to remove what runs for an
// environment that was deleted (alone or with its application). The row
// may be gone by the time the job runs, so the args carry everything the
// teardown needs: Preview (previews lose their volumes, environments keep
// them) and Name (for the event) are captured when the deletion is saved.
type EnvironmentTeardownArgs struct {
	TeamID        string `json:"team_id"`
	EnvironmentID string `json:"environment_id"`
	Name          string `json:"name,omitempty"`
	Preview       bool   `json:"preview,omitempty"`
}

// Kind is the River job kind.
func (EnvironmentTeardownArgs) Kind() string { return "environment_teardown" }

// InsertOpts: teardown talks to Docker like a deployment does, so it shares
// the deploy queue and retries an unreachable engine with backoff.
func (EnvironmentTeardownArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		Queue:       QueueDeploy,
		MaxAttempts: 25,
		UniqueOpts:  river.UniqueOpts{ByArgs: true},
	}
}

// EnvironmentTeardownWorker is the River worker of EnvironmentTeardownArgs.
type EnvironmentTeardownWorker struct {
	river.WorkerDefaults[EnvironmentTeardownArgs]
	// Pipeline supplies the driver, the routes hook and the store; nil in
	// insert-only processes, which never work jobs.
	Pipeline *pipeline.Pipeline
}

// teardownTimeout bounds one attempt: removal waits for every task's stop
// grace period, which the manifest may set to minutes.
const teardownTimeout = 15 * time.Minute

// Timeout overrides River's one-minute default; see teardownTimeout.
func (w *EnvironmentTeardownWorker) Timeout(*river.Job[EnvironmentTeardownArgs]) time.Duration {
	return teardownTimeout
}

// Work tears the environment down. Every step is idempotent, so an attempt
// that failed half-way (Docker unreachable, a network still in use) is
// simply run again by River.
func (w *EnvironmentTeardownWorker) Work(ctx context.Context, job *river.Job[EnvironmentTeardownArgs]) error {
	if w.Pipeline == nil || w.Pipeline.Store == nil {
		return errors.New("environment teardown: this process has no pipeline to work jobs with")
	}
	a := job.Args
	_, err := w.Pipeline.TeardownEnvironment(ctx, pipeline.Teardown{
		TeamID: a.TeamID, EnvironmentID: a.EnvironmentID, Name: a.Name, Preview: a.Preview,
	})
	return riverError(err)
}
