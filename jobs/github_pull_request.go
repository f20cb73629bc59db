package jobs

import (
	"context"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/store"
)

// GitHubPullRequestArgs handles a pull_request delivery.
type GitHubPullRequestArgs struct {
	DeliveryID string `json:"delivery_id"`
}

// Kind is the job's stable name.
func (GitHubPullRequestArgs) Kind() string { return "github_pull_request" }

// GitHubPullRequestWorker decides, per application following the
// repository, what a pull request gets: a same-repository PR by an author
// with write permission gets its preview (re)deployed; a PR from a fork or
// from an author without write permission waits for a member's approval
// (the comment says so); a closed PR has its preview deleted.
type GitHubPullRequestWorker struct {
	river.WorkerDefaults[GitHubPullRequestArgs]
	deps GitHubDeps
}

// Work handles the delivery.
func (w *GitHubPullRequestWorker) Work(ctx context.Context, job *river.Job[GitHubPullRequestArgs]) error {
	st := w.deps.Store
	d, s, err := githubLoadDelivery(ctx, st, job.Args.DeliveryID)
	if err != nil {
		return err
	}
	teamID, err := githubActiveTeam(ctx, st, d.InstallationID)
	if err != nil {
		return err
	}
	if teamID != "" {
		links, err := st.ListGitHubRepositoryLinks(ctx, teamID, s.RepositoryID)
		if err != nil {
			return err
		}
		for _, l := range links {
			switch d.Action {
			case "opened", "reopened", "synchronize":
				err = w.open(ctx, teamID, d.InstallationID, l, s)
			case "closed":
				err = w.close(ctx, teamID, l, s)
			}
			if err != nil {
				return fmt.Errorf("pull request %s#%d for %s: %w", s.FullName, s.Number, l.ApplicationID, err)
			}
		}
	}
	w.deps.finishDelivery(ctx, d.DeliveryID)
	return nil
}

func (w *GitHubPullRequestWorker) open(ctx context.Context, teamID string, installationID int64, l store.GitHubRepositoryLink, s GitHubDeliverySummary) error {
	fork := s.HeadRepositoryID != s.RepositoryID
	trusted := false
	if !fork {
		if w.deps.GitHub == nil {
			return river.JobCancel(fmt.Errorf("github_not_configured: no GitHub client to check %s's permission", s.AuthorLogin))
		}
		perm, err := w.deps.GitHub.CollaboratorPermission(ctx, installationID, s.FullName, s.AuthorLogin)
		if err != nil {
			return err
		}
		trusted = perm.CanWrite()
	}
	approval, status := store.ApprovalAutomatic, github.CommentQueued
	if !trusted {
		approval, status = store.ApprovalPending, github.CommentApprovalRequired
	}
	return w.deps.Store.WithTx(ctx, func(tx *store.Store) error {
		pr, err := tx.UpsertGitHubPullRequest(ctx, teamID, store.GitHubPullRequestParams{
			ApplicationID: l.ApplicationID, InstallationID: installationID, RepositoryID: s.RepositoryID,
			FullName: s.FullName, Number: s.Number, HeadBranch: s.HeadBranch, HeadSHA: s.HeadSHA,
			AuthorLogin: s.AuthorLogin, FromFork: fork, Approval: approval, Status: status,
		})
		if err != nil {
			return err
		}
		if pr.Approval == store.ApprovalPending {
			if _, err := tx.RecordEvent(ctx, teamID, store.EventParams{
				Actor: "github", Verb: "preview.approval_requested", ObjectType: "application", ObjectID: l.ApplicationID,
				Details: map[string]any{"pull_request": pr.ID, "number": pr.Number, "author": pr.AuthorLogin, "fork": fork},
			}); err != nil {
				return err
			}
			return githubInsertTx(ctx, tx, GitHubNotifyArgs{TeamID: teamID, PullRequestID: pr.ID})
		}
		// Automatic, or approved at this very head commit (a redelivery).
		return githubInsertTx(ctx, tx, GitHubPreviewArgs{TeamID: teamID, PullRequestID: pr.ID, HeadSHA: pr.HeadSHA})
	})
}

func (w *GitHubPullRequestWorker) close(ctx context.Context, teamID string, l store.GitHubRepositoryLink, s GitHubDeliverySummary) error {
	st := w.deps.Store
	pr, err := st.FindGitHubPullRequest(ctx, teamID, l.ApplicationID, s.RepositoryID, s.Number)
	if err != nil {
		return githubIgnoreMissing(err) // never opened here: nothing to remove
	}
	// A preview may exist even when the row is pending again: one approved
	// at an earlier head keeps running until deleted.
	if pr.DeploymentID != "" || pr.Approval != store.ApprovalPending {
		if w.deps.Previews == nil {
			return river.JobCancel(fmt.Errorf("previews_not_configured: cannot delete the preview of %s", pr.HeadBranch))
		}
		if err := w.deps.Previews.DeletePreview(ctx, teamID, l.ApplicationID, githubPreviewRef(pr)); err != nil {
			return err
		}
	}
	closed, removed := "closed", github.CommentRemoved
	return st.WithTx(ctx, func(tx *store.Store) error {
		if _, err := tx.UpdateGitHubPullRequest(ctx, teamID, pr.ID, store.GitHubPullRequestUpdate{State: &closed, Status: &removed}); err != nil {
			return err
		}
		return githubInsertTx(ctx, tx, GitHubNotifyArgs{TeamID: teamID, PullRequestID: pr.ID})
	})
}

// githubPreviewRef is the branch a pull request's preview deploys. A fork's
// branch does not exist in the application's repository (and its name may
// shadow one that does, such as main), so fork previews deploy the ref
// GitHub keeps for every pull request in the base repository.
func githubPreviewRef(pr store.GitHubPullRequest) string {
	if pr.FromFork {
		return fmt.Sprintf("pull/%d/head", pr.Number)
	}
	return pr.HeadBranch
}
