package jobs

import (
	"context"

	"github.com/slipwayhq/slipway/store"
)

// NotifyGitHubTx is the deployment pipeline's hook on state changes: when
// the deployment's application is connected to a repository of an active
// GitHub installation (so the deployment is a pull request's preview or a
// push-deployed commit), it inserts github_notify in tx, the transaction
// that wrote the state. Only the job talks to GitHub, retrying on its own
// schedule, so an outage never holds the deployment up. Applications not
// connected to GitHub insert nothing.
func NotifyGitHubTx(ctx context.Context, tx *store.Store, enqueue Enqueue, d store.Deployment) error {
	ok, err := tx.GitHubNotifies(ctx, d.TeamID, d.ApplicationID)
	if err != nil || !ok {
		return err
	}
	return enqueue(ctx, tx, GitHubNotifyArgs{TeamID: d.TeamID, DeploymentID: d.ID})
}
