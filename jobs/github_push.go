package jobs

import (
	"context"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/store"
)

// GitHubPushArgs handles a push delivery.
type GitHubPushArgs struct {
	DeliveryID string `json:"delivery_id"`
}

// Kind is the job's stable name.
func (GitHubPushArgs) Kind() string { return "github_push" }

// GitHubPushWorker turns a push into a sync hint for every application
// following the repository. It never deploys the commit the payload names:
// a payload is a hint that something moved, and the sync machinery lists
// the heads itself (the spec's sync rules), so a forged or stale payload
// cannot choose what runs.
type GitHubPushWorker struct {
	river.WorkerDefaults[GitHubPushArgs]
	deps GitHubDeps
}

// Work records a branch_push_hint event per linked application and tells
// the sync hook, when there is one.
func (w *GitHubPushWorker) Work(ctx context.Context, job *river.Job[GitHubPushArgs]) error {
	st := w.deps.Store
	d, s, err := githubLoadDelivery(ctx, st, job.Args.DeliveryID)
	if err != nil {
		return err
	}
	teamID, err := githubActiveTeam(ctx, st, d.InstallationID)
	if err != nil {
		return err
	}
	if teamID != "" && s.Branch != "" {
		links, err := st.ListGitHubRepositoryLinks(ctx, teamID, s.RepositoryID)
		if err != nil {
			return err
		}
		for _, l := range links {
			if _, err := st.RecordEvent(ctx, teamID, store.EventParams{
				Actor: "github", Verb: "branch_push_hint", ObjectType: "application", ObjectID: l.ApplicationID,
				Details: map[string]any{"repository": s.FullName, "branch": s.Branch, "delivery_id": d.DeliveryID},
			}); err != nil {
				return err
			}
			// The hook for the sync machinery: it lists heads and decides.
			if w.deps.Push != nil {
				if err := w.deps.Push.BranchPushed(ctx, teamID, l.ApplicationID, s.Branch); err != nil {
					return fmt.Errorf("push hint for %s: %w", l.ApplicationID, err)
				}
			}
		}
	}
	w.deps.finishDelivery(ctx, d.DeliveryID)
	return nil
}
