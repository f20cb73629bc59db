package pipeline

import (
	"context"

	"github.com/slipwayhq/slipway/tracing"
)

// advanceTraced runs advance inside a deployment span; each step that
// finishes meanwhile becomes a child span (traceStep). Without an OTLP
// endpoint the spans go to OpenTelemetry's no-op provider.
func (r *run) advanceTraced(ctx context.Context) error {
	ctx, span := tracing.StartDeployment(ctx, r.d.ID, r.env.ID, r.app.ID)
	err := r.advance(ctx)
	tracing.EndDeployment(span, err)
	return err
}

// traceStep records a finished step as a span with its own times.
func (r *run) traceStep(ctx context.Context, step string) {
	s := r.progress.Find(step)
	if s == nil || s.FinishedAt == nil {
		return
	}
	tracing.Step(ctx, step, s.State, s.Message, s.StartedAt, *s.FinishedAt)
}
