package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/slipwayhq/slipway/runtime/swarm"
)

// WatchServiceEvents triggers reconciliation when Docker reports a change to
// one of Slipway's services (a manual `docker service scale`, an update,
// a removal), so drift is repaired within seconds rather than at the next
// periodic scan. trigger should insert ReconcileArgs with uniqueness over a
// short period, since one change produces several events. The stream is
// reopened with backoff when Docker goes away; it returns when ctx ends.
func WatchServiceEvents(ctx context.Context, src swarm.EventSource, trigger func(context.Context) error, log *slog.Logger) {
	backoff := time.Second
	for ctx.Err() == nil {
		events, errs := swarm.ServiceEvents(ctx, src)
		for ev := range events {
			backoff = time.Second
			if ev.Action == "create" {
				continue // a deployment creating services is not drift
			}
			if err := trigger(ctx); err != nil && ctx.Err() == nil {
				log.WarnContext(ctx, "trigger reconciliation", "service", ev.Name, "error", err)
			}
		}
		select {
		case err := <-errs:
			log.WarnContext(ctx, "docker service events stopped; reconnecting", "error", err, "in", backoff)
		default:
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Minute)
	}
}
