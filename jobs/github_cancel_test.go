package jobs_test

import (
	"context"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/pipeline/pipelinetest"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/forge/github/githubtest"
	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/store"
)

// Cancelling a preview's deployment (what the dashboard, the API and
// `slipway deployment cancel` all call) goes through the same GitHub hook
// as the pipeline's own transitions: the pull request's comment turns to
// failed naming the cancellation, and the head commit's status fails.
func TestGitHubNotify_CancelledDeploymentUpdatesPullRequest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, d := setupQueuedPreviewDeployment(t)

	d, err := service.CancelDeployment(ctx, b.Store, service.Actor{TeamID: b.Team.ID, UserID: "ada"}, b.enqueue, d.ID)
	must(t, err)
	pipelinetest.ExpectState(t, d, store.StateCancelled)

	b.wantCancellationReported(t)
}

// Deleting a preview cancels its waiting deployment; the pull request
// hears of it like any other cancellation instead of staying queued.
func TestGitHubNotify_PreviewDeleteCancellationUpdatesPullRequest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, d := setupQueuedPreviewDeployment(t)

	// This River client works GitHub jobs only; the deletion job itself is
	// recorded (no worker here tears Swarm objects down).
	var others []string
	enqueue := func(ctx context.Context, tx *store.Store, args river.JobArgs) error {
		if _, ok := args.(jobs.PreviewDeleteArgs); ok {
			others = append(others, args.Kind())
			return nil
		}
		return b.enqueue(ctx, tx, args)
	}
	previews := &service.Previews{Store: b.Store}
	_, err := previews.Delete(ctx, service.Actor{TeamID: b.Team.ID, UserID: "ada"}, enqueue, b.App.ID, b.preview.Slug)
	must(t, err)
	if len(others) != 1 {
		t.Fatalf("queued %v besides GitHub jobs, want the preview deletion", others)
	}
	d, err = b.Store.GetDeployment(ctx, b.Team.ID, d.ID)
	must(t, err)
	pipelinetest.ExpectState(t, d, store.StateCancelled)

	b.wantCancellationReported(t)
}

// setupQueuedPreviewDeployment is a GitHub pipeline with a deployment of
// the preview that its pull request's comment says is queued.
func setupQueuedPreviewDeployment(t *testing.T) (*githubPipeline, store.Deployment) {
	t.Helper()
	ctx := context.Background()
	b := setupGitHubPipeline(t)
	rev := b.SaveRevision(t, b.App.ID, notifyManifest(b.App.Name, "busybox:latest"))
	d, err := b.Store.CreateDeployment(ctx, b.Team.ID, store.DeploymentParams{EnvironmentID: b.preview.ID, Revision: rev, Origin: store.OriginBuild, Actor: "github"})
	must(t, err)
	queued := github.CommentQueued
	_, err = b.Store.UpdateGitHubPullRequest(ctx, b.Team.ID, b.pr.ID, store.GitHubPullRequestUpdate{Status: &queued, DeploymentID: &d.ID})
	must(t, err)
	return b, d
}

// wantCancellationReported waits for the pull request's comment to turn
// to failed naming the cancellation, and for its head commit's status to
// fail.
func (b *githubPipeline) wantCancellationReported(t *testing.T) {
	t.Helper()
	cs := b.waitComment(t, func(cs []githubtest.Comment) bool {
		return len(cs) > 0 && strings.Contains(cs[len(cs)-1].Body, "Failed")
	})
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "cancelled") {
		t.Fatalf("want one comment naming the cancellation, got %+v", cs)
	}
	b.waitStatus(t, b.pr.HeadSHA, github.StateFailure)
}
