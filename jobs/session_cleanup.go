package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
)

// sessionCleanupInterval: expired sessions are already refused at read
// time; deleting them is housekeeping, so once an hour is plenty.
const sessionCleanupInterval = time.Hour

// SessionCleanupArgs asks for expired sessions to be deleted.
type SessionCleanupArgs struct{}

// Kind is the job's stable name.
func (SessionCleanupArgs) Kind() string { return "session_cleanup" }

// InsertOpts makes concurrent requests within one interval collapse into
// one job.
func (SessionCleanupArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByPeriod: sessionCleanupInterval}}
}

// SessionCleanupWorker deletes sessions that have expired.
type SessionCleanupWorker struct {
	river.WorkerDefaults[SessionCleanupArgs]
	deps Deps
}

// Work deletes every expired session.
func (w *SessionCleanupWorker) Work(ctx context.Context, job *river.Job[SessionCleanupArgs]) error {
	n, err := w.deps.Store.DeleteExpiredSessions(ctx, w.deps.now())
	if err != nil {
		return fmt.Errorf("session cleanup: %w", err)
	}
	w.deps.logger().InfoContext(ctx, "expired sessions deleted", "count", n, "job_id", job.ID)
	return nil
}
