package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/notify"
	"github.com/slipwayhq/slipway/store"
)

// NotificationDeliverArgs asks for one attempt at a notification delivery
// (notify.Emitter records it and inserts this job in the same
// transaction).
type NotificationDeliverArgs struct {
	TeamID     string `json:"team_id"`
	DeliveryID string `json:"delivery_id"`
}

// Kind is the job's stable name.
func (NotificationDeliverArgs) Kind() string { return "notification_deliver" }

// NotificationAttempts is how many times a delivery is tried: with River's
// backoff (attempt⁴ seconds) the last one comes about two hours after the
// first.
const NotificationAttempts = 8

// InsertOpts: a delivery is retried with backoff; one job per delivery.
func (NotificationDeliverArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: NotificationAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// NotificationDeliverWorker makes the attempts.
type NotificationDeliverWorker struct {
	river.WorkerDefaults[NotificationDeliverArgs]
	Deliverer *notify.Deliverer
	// Backoff is the wait before attempt n+1 after n failed; nil is
	// River's default. Tests shorten it.
	Backoff func(attempt int) time.Duration
}

// Timeout: one attempt is bounded by the sender's own timeout.
func (w *NotificationDeliverWorker) Timeout(*river.Job[NotificationDeliverArgs]) time.Duration {
	return time.Minute
}

// NextRetry applies Backoff when set.
func (w *NotificationDeliverWorker) NextRetry(job *river.Job[NotificationDeliverArgs]) time.Time {
	if w.Backoff == nil {
		return time.Time{}
	}
	return time.Now().Add(w.Backoff(job.Attempt))
}

// Work makes one attempt; a refusal that retrying cannot help ends the
// job, other failures are retried until the last attempt.
func (w *NotificationDeliverWorker) Work(ctx context.Context, job *river.Job[NotificationDeliverArgs]) error {
	if w.Deliverer == nil {
		return errors.New("notifications_unavailable: this process cannot deliver notifications")
	}
	err := w.Deliverer.Deliver(ctx, job.Args.TeamID, job.Args.DeliveryID, job.Attempt >= job.MaxAttempts)
	var pe *notify.PermanentError
	if errors.As(err, &pe) {
		return river.JobCancel(err)
	}
	if err != nil {
		return fmt.Errorf("notification delivery %s: %w", job.Args.DeliveryID, err)
	}
	return nil
}

// RegisterNotifications adds the delivery worker; d is nil in processes
// that only insert (serve).
func RegisterNotifications(workers *river.Workers, d *notify.Deliverer) error {
	return river.AddWorkerSafely(workers, &NotificationDeliverWorker{Deliverer: d})
}

// NotificationEnqueue is notify.Enqueue over enqueue (a River insert in
// the transaction of tx).
func NotificationEnqueue(enqueue Enqueue) notify.Enqueue {
	return func(ctx context.Context, tx *store.Store, teamID, deliveryID string) error {
		return enqueue(ctx, tx, NotificationDeliverArgs{TeamID: teamID, DeliveryID: deliveryID})
	}
}
