package jobs

import (
	"context"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/store"
)

// NotifyGitHubTx is the deployment pipeline's hook on state changes: when
// the deployment's application is connected to a repository of an active
// GitHub installation (so the deployment is a pull request's preview or a
// push-deployed commit), it inserts github_notify in tx, the transaction
// that wrote the state. Only the job talks to GitHub, retrying on its own
// schedule, so an outage never holds the deployment up. Applications not
// connected to GitHub insert nothing.
func NotifyGitHubTx(ctx context.Context, tx *store.Store, enqueue func(context.Context, *store.Store, river.JobArgs) error, d store.Deployment) error {
	ok, err := tx.GitHubNotifies(ctx, d.TeamID, d.ApplicationID)
	if err != nil || !ok {
		return err
	}
	return enqueue(ctx, tx, GitHubNotifyArgs{TeamID: d.TeamID, DeploymentID: d.ID})
}

// transitionTx writes a state change and its GitHub notification in one
// transaction.
func (p *Pipeline) transitionTx(ctx context.Context, change func(tx *store.Store) (store.Deployment, error)) (store.Deployment, error) {
	var d store.Deployment
	err := p.Store.WithTx(ctx, func(tx *store.Store) error {
		var err error
		if d, err = change(tx); err != nil {
			return err
		}
		return NotifyGitHubTx(ctx, tx, p.Enqueue, d)
	})
	return d, err
}
