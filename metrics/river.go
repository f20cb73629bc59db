package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river/rivertype"
)

// RiverMiddleware records every job attempt with ObserveJob: add it to
// river.Config.Middleware of the client that works jobs.
func (r *Registry) RiverMiddleware() rivertype.WorkerMiddleware { return jobMiddleware{r} }

type jobMiddleware struct{ r *Registry }

func (jobMiddleware) IsMiddleware() bool { return true }

func (m jobMiddleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	start := time.Now()
	// River sets AttemptedAt when it locks the job; ScheduledAt is when the
	// job (or this retry) became available, so the gap is time in the queue.
	attempted := start
	if job.AttemptedAt != nil {
		attempted = *job.AttemptedAt
	}
	err := doInner(ctx)
	m.r.ObserveJob(job.Kind, attempted.Sub(job.ScheduledAt), time.Since(start), jobOutcome(err))
	return err
}

// jobOutcome names how Work ended, as River will treat it.
func jobOutcome(err error) string {
	var snooze *rivertype.JobSnoozeError
	var cancel *rivertype.JobCancelError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &snooze):
		return "snooze"
	case errors.As(err, &cancel):
		return "cancel"
	}
	return "error"
}
