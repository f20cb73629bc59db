package jobs

import (
	"context"
	"errors"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/store"
)

// GitHubPreviewArgs deploys the preview of a pull request that may have
// one (automatic, or approved by a member) at the head commit it was
// decided for.
type GitHubPreviewArgs struct {
	TeamID        string `json:"team_id"`
	PullRequestID string `json:"pull_request_id"`
	HeadSHA       string `json:"head_sha"`
}

// Kind is the job's stable name.
func (GitHubPreviewArgs) Kind() string { return "github_preview" }

// GitHubPreviewWorker asks the preview machinery for the deployment and
// records it on the pull request, with a notification in the same
// transaction.
type GitHubPreviewWorker struct {
	river.WorkerDefaults[GitHubPreviewArgs]
	deps GitHubDeps
}

// Work deploys the preview unless the pull request moved on meanwhile
// (closed, or a newer head that needs its own decision).
func (w *GitHubPreviewWorker) Work(ctx context.Context, job *river.Job[GitHubPreviewArgs]) error {
	st := w.deps.Store
	a := job.Args
	pr, err := st.GetGitHubPullRequest(ctx, a.TeamID, a.PullRequestID)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	if pr.State != "open" || pr.Approval == store.ApprovalPending || pr.HeadSHA != a.HeadSHA {
		return nil
	}
	if w.deps.Previews == nil {
		return river.JobCancel(errors.New("previews_not_configured: no preview deployer"))
	}
	depID, err := w.deps.Previews.EnsurePreview(ctx, a.TeamID, pr.ApplicationID, githubPreviewRef(pr), pr.HeadSHA)
	if err != nil {
		return fmt.Errorf("ensure preview of %s#%d: %w", pr.FullName, pr.Number, err)
	}
	queued := github.CommentQueued
	return st.WithTx(ctx, func(tx *store.Store) error {
		if _, err := tx.UpdateGitHubPullRequest(ctx, a.TeamID, pr.ID, store.GitHubPullRequestUpdate{Status: &queued, DeploymentID: &depID}); err != nil {
			return err
		}
		return githubInsertTx(ctx, tx, GitHubNotifyArgs{TeamID: a.TeamID, PullRequestID: pr.ID})
	})
}

// ApproveGitHubPreview is the dashboard's and CLI's approve action: it
// records userID's approval of a pending pull request and inserts the
// preview job in the same transaction. A pull request that is not pending
// is store.ErrNotFound.
func ApproveGitHubPreview(ctx context.Context, st *store.Store, enqueue func(context.Context, *store.Store, river.JobArgs) error, teamID, pullRequestID, userID string) error {
	return st.WithTx(ctx, func(tx *store.Store) error {
		pr, err := tx.ApproveGitHubPullRequest(ctx, teamID, pullRequestID, userID)
		if err != nil {
			return err
		}
		if _, err := tx.RecordEvent(ctx, teamID, store.EventParams{
			Actor: "user:" + userID, Verb: "preview.approved", ObjectType: "application", ObjectID: pr.ApplicationID,
			Details: map[string]any{"pull_request": pr.ID, "number": pr.Number, "head_sha": pr.HeadSHA},
		}); err != nil {
			return err
		}
		return enqueue(ctx, tx, GitHubPreviewArgs{TeamID: teamID, PullRequestID: pr.ID, HeadSHA: pr.HeadSHA})
	})
}
