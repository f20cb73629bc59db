package jobs

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/store"
)

// DeployArgs asks a worker to advance one deployment as far as it goes.
// Resume distinguishes the job inserted when a worker died holding the
// deployment from the original one.
type DeployArgs struct {
	TeamID       string `json:"team_id"`
	DeploymentID string `json:"deployment_id"`
	Resume       int    `json:"resume,omitempty"`
}

// Kind is the River job kind.
func (DeployArgs) Kind() string { return "deploy" }

// InsertOpts: deploy jobs have their own queue and many attempts, since
// Docker being unreachable is retried with backoff rather than failing.
func (DeployArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		Queue:       QueueDeploy,
		MaxAttempts: 25,
		UniqueOpts:  river.UniqueOpts{ByArgs: true},
	}
}

// QueueDeploy runs deployments; its concurrency bounds how many
// environments deploy at once on one worker.
const QueueDeploy = "deploy"

// InsertFromWorker inserts args in tx's transaction with the River client
// that is working the current job.
func InsertFromWorker(ctx context.Context, tx *store.Store, args river.JobArgs) error {
	client := river.ClientFromContext[pgx.Tx](ctx)
	_, err := client.InsertTx(ctx, tx.Tx(), args, nil)
	return err
}

// DeployWorker is the River worker of DeployArgs.
type DeployWorker struct {
	river.WorkerDefaults[DeployArgs]
	Pipeline *pipeline.Pipeline
}

// Timeout: a deployment waits for builds, jobs and convergence, each bounded
// by its own setting; River's default one-minute limit does not fit.
func (w *DeployWorker) Timeout(*river.Job[DeployArgs]) time.Duration { return -1 }

// Work advances the deployment.
func (w *DeployWorker) Work(ctx context.Context, job *river.Job[DeployArgs]) error {
	return riverError(w.Pipeline.Advance(ctx, job.Args.TeamID, job.Args.DeploymentID))
}

// Enqueue inserts args in the transaction of tx.
type Enqueue = func(ctx context.Context, tx *store.Store, args river.JobArgs) error

// Queue is the pipeline's Queue on River: it inserts deploy, github_notify
// and links_reconcile jobs with Enqueue, or with the client working the
// current job (InsertFromWorker) when Enqueue is nil.
type Queue struct {
	Enqueue Enqueue
}

var _ pipeline.Queue = Queue{}

func (q Queue) enqueue() Enqueue {
	if q.Enqueue == nil {
		return InsertFromWorker
	}
	return q.Enqueue
}

// Deploy inserts the deploy job of a deployment.
func (q Queue) Deploy(ctx context.Context, tx *store.Store, teamID, deploymentID string) error {
	return q.enqueue()(ctx, tx, DeployArgs{TeamID: teamID, DeploymentID: deploymentID})
}

// StateChanged inserts the GitHub notification of a state change.
func (q Queue) StateChanged(ctx context.Context, tx *store.Store, d store.Deployment) error {
	return NotifyGitHubTx(ctx, tx, q.enqueue(), d)
}

// LinksChanged inserts the team's links_reconcile.
func (q Queue) LinksChanged(ctx context.Context, tx *store.Store, teamID string) error {
	return q.enqueue()(ctx, tx, LinksReconcileArgs{TeamID: teamID})
}

// riverError turns the pipeline's waits and permanent errors into River's
// snooze and cancel; other errors are retried with backoff.
func riverError(err error) error {
	var wait *pipeline.WaitError
	if errors.As(err, &wait) {
		return river.JobSnooze(wait.After)
	}
	var permanent *pipeline.PermanentError
	if errors.As(err, &permanent) {
		return river.JobCancel(err)
	}
	return err
}
