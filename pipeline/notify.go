package pipeline

import (
	"context"

	"github.com/slipwayhq/slipway/notify"
	"github.com/slipwayhq/slipway/store"
)

// Notifier tells a team's notification destinations what happened
// (notify.Emitter), inside the transaction that records it.
type Notifier interface {
	Emit(ctx context.Context, tx *store.Store, ev notify.Event) error
}

// notifyOutcome emits the event of a deployment that reached its
// outcome, in the transaction of tx that records it: succeeded (rolled
// back when the deployment is a rollback, ready for a preview) or failed.
// Other states tell nobody.
func (p *Pipeline) notifyOutcome(ctx context.Context, tx *store.Store, d store.Deployment) error {
	if p.Notify == nil || (d.State != store.StateSucceeded && d.State != store.StateFailed) {
		return nil
	}
	env, err := tx.GetEnvironment(ctx, d.TeamID, d.EnvironmentID)
	if err != nil {
		return err
	}
	preview := env.Kind == store.KindPreview
	var kind notify.Kind
	switch {
	case d.State == store.StateFailed && preview:
		kind = notify.PreviewFailed
	case d.State == store.StateFailed:
		kind = notify.DeploymentFailed
	case preview:
		kind = notify.PreviewReady
	case d.Origin == store.OriginRollback:
		kind = notify.DeploymentRolledBack
	default:
		kind = notify.DeploymentSucceeded
	}
	ev := notify.Event{
		Kind: kind, TeamID: d.TeamID, ApplicationID: d.ApplicationID,
		EnvironmentID: env.ID, EnvironmentName: env.Name, Preview: preview,
		DeploymentID: d.ID, Code: d.ErrorCode, Message: d.ErrorMessage,
	}
	if d.FinishedAt != nil {
		ev.At = *d.FinishedAt
	}
	if kind == notify.DeploymentRolledBack && d.RestoredFrom != "" {
		ev.Message = "The environment runs deployment " + d.RestoredFrom + " again, its last successful one."
	}
	return p.Notify.Emit(ctx, tx, ev)
}
