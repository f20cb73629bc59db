package jobs_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/pipeline"

	"github.com/slipwayhq/slipway/pipeline/pipelinetest"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/forge/github/githubtest"
	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
)

const (
	notifyInstallation = int64(91)
	notifyRepoID       = int64(5)
	notifyRepo         = "acme/notes"
	notifyPR           = 7
)

// githubPipeline is a pipeline bundle whose application is connected to a
// repository of a GitHub installation (the fake), with River working the
// GitHub jobs the pipeline inserts.
type githubPipeline struct {
	*pipelinetest.Bundle
	fake   *githubtest.Server
	client *river.Client[pgx.Tx]
	// enqueue inserts with client in the caller's transaction.
	enqueue jobs.Enqueue
	preview store.Environment
	pr      store.GitHubPullRequest
}

func setupGitHubPipeline(t *testing.T) *githubPipeline {
	t.Helper()
	ctx := context.Background()
	b := &githubPipeline{Bundle: pipelinetest.Setup(t, "production"), fake: githubtest.New(t)}
	st := b.Store
	b.fake.AddInstallation(notifyInstallation, "acme", githubtest.Repo{ID: notifyRepoID, FullName: notifyRepo})
	user, err := st.CreateUser(ctx, "ada-"+swarmtest.ID()+"@example.com", "Ada", "hash")
	must(t, err)
	must(t, st.AddMember(ctx, b.Team.ID, user.ID, store.RoleOwner))
	_, err = st.BindGitHubInstallation(ctx, b.Team.ID, notifyInstallation, user.ID)
	must(t, err)
	_, err = st.LinkGitHubRepository(ctx, b.Team.ID, b.App.ID, notifyInstallation, notifyRepoID, notifyRepo)
	must(t, err)
	slug := "pr-" + strings.ToLower(swarmtest.ID())
	b.preview, err = st.CreateEnvironment(ctx, b.Team.ID, store.EnvironmentParams{
		ApplicationID: b.App.ID, Kind: store.KindPreview, Name: slug, Branch: "feature", Slug: slug,
	})
	must(t, err)
	// The tests deploy the preview; its Swarm objects go with the team's
	// (setupPipeline), after the River client below has stopped.
	must(t, st.SetEnvironmentHostnames(ctx, b.Team.ID, b.preview.ID, []string{slug + ".preview.test"}))
	b.pr, err = st.UpsertGitHubPullRequest(ctx, b.Team.ID, store.GitHubPullRequestParams{
		ApplicationID: b.App.ID, InstallationID: notifyInstallation, RepositoryID: notifyRepoID, FullName: notifyRepo,
		Number: notifyPR, HeadBranch: "feature", HeadSHA: strings.Repeat("a", 40), AuthorLogin: "wendy",
		Approval: store.ApprovalAutomatic, Status: github.CommentQueued,
	})
	must(t, err)

	gh, err := github.New(b.fake.Config(), github.Options{Retry: github.RetryPolicy{BaseDelay: time.Millisecond}})
	must(t, err)
	workers := river.NewWorkers()
	must(t, jobs.RegisterGitHub(workers, jobs.GitHubDeps{Store: st, GitHub: gh, PublicURL: "https://slipway.test", Logger: slog.New(slog.DiscardHandler)}))
	b.client, err = river.NewClient(riverpgxv5.New(st.Pool()), &river.Config{
		Workers: workers, Logger: slog.New(slog.DiscardHandler),
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 4}},
		FetchPollInterval: 20 * time.Millisecond, FetchCooldown: 5 * time.Millisecond,
	})
	must(t, err)
	must(t, b.client.Start(ctx))
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b.client.Stop(stop)
	})
	// The pipeline inserts with the River client, in its own transactions.
	b.enqueue = func(ctx context.Context, tx *store.Store, args river.JobArgs) error {
		_, err := b.client.InsertTx(ctx, tx.Tx(), args, nil)
		return err
	}
	b.Pipeline.Queue = jobs.Queue{Enqueue: b.enqueue}
	return b
}

// deployPreview requests a deployment of the preview at sha, links it to
// the pull request as the preview job does, and advances it to the end.
func (b *githubPipeline) deployPreview(t *testing.T, toml, sha string) store.Deployment {
	t.Helper()
	ctx := context.Background()
	rev := b.SaveRevision(t, b.App.ID, toml)
	d, err := b.Store.CreateDeployment(ctx, b.Team.ID, store.DeploymentParams{EnvironmentID: b.preview.ID, Revision: rev, Origin: store.OriginBuild, Actor: "github"})
	must(t, err)
	// A synchronize: the new head, queued for this deployment.
	b.pr, err = b.Store.UpsertGitHubPullRequest(ctx, b.Team.ID, store.GitHubPullRequestParams{
		ApplicationID: b.App.ID, InstallationID: notifyInstallation, RepositoryID: notifyRepoID, FullName: notifyRepo,
		Number: notifyPR, HeadBranch: "feature", HeadSHA: sha, AuthorLogin: "wendy",
		Approval: store.ApprovalAutomatic, Status: github.CommentQueued,
	})
	must(t, err)
	queued := github.CommentQueued
	_, err = b.Store.UpdateGitHubPullRequest(ctx, b.Team.ID, b.pr.ID, store.GitHubPullRequestUpdate{Status: &queued, DeploymentID: &d.ID})
	must(t, err)
	_, err = b.client.Insert(ctx, jobs.GitHubNotifyArgs{TeamID: b.Team.ID, PullRequestID: b.pr.ID}, nil)
	must(t, err)
	return b.Advance(t, d.ID)
}

func notifyManifest(app, image string) string {
	return `api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = "` + app + `"
[[spec.services]]
name = "web"
[spec.services.source]
type = "image"
image = "` + image + `"
[spec.services.healthcheck]
type = "http"
port = 8080
path = "/health"
interval_seconds = 2
timeout_seconds = 2
start_period_seconds = 30
retries = 5
`
}

// waitComment waits for the pull request's comments to satisfy ok (the
// notify jobs run asynchronously) and returns them.
func (b *githubPipeline) waitComment(t *testing.T, ok func([]githubtest.Comment) bool) []githubtest.Comment {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		cs := b.fake.Comments(notifyRepo, notifyPR)
		if ok(cs) {
			return cs
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pull request's comments never got there: %+v", cs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitStatus waits for the last status of sha to be state.
func (b *githubPipeline) waitStatus(t *testing.T, sha, state string) githubtest.Status {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := lastStatus(b.fake.Statuses(notifyRepo), sha)
		if st.State == state {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("the last status of %s never became %s: %+v", sha, state, b.fake.Statuses(notifyRepo))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func lastStatus(statuses []githubtest.Status, sha string) githubtest.Status {
	var out githubtest.Status
	for _, s := range statuses {
		if s.SHA == sha {
			out = s
		}
	}
	return out
}

func TestGitHubNotify_PreviewStateChangesUpdateOneComment(t *testing.T) {
	t.Parallel()
	b := setupGitHubPipeline(t)
	web := swarmtest.Image(t, "web")
	good := notifyManifest(b.App.Name, web)
	sha1 := strings.Repeat("1", 40)
	d := b.deployPreview(t, good, sha1)
	pipelinetest.ExpectState(t, d, store.StateSucceeded)

	// queued → building → deploying → ready, each a job: one comment,
	// updated in place, ending ready with the preview's URL, the commit
	// and the deployment's link; a success status pointing there.
	cs := b.waitComment(t, func(cs []githubtest.Comment) bool {
		return len(cs) > 0 && strings.Contains(cs[len(cs)-1].Body, "Ready")
	})
	if len(cs) != 1 {
		t.Fatalf("want exactly one comment, got %d: %+v", len(cs), cs)
	}
	body := cs[0].Body
	for _, want := range []string{github.Marker(b.App.ID), "https://" + b.preview.Slug + ".preview.test", sha1[:12], "https://slipway.test/applications/" + b.App.ID + "/deployments/" + d.ID} {
		if !strings.Contains(body, want) {
			t.Errorf("comment lacks %q:\n%s", want, body)
		}
	}
	if cs[0].Updates == 0 {
		t.Errorf("the comment was never updated in place (one per state change expected): %+v", cs[0])
	}
	st := b.waitStatus(t, sha1, github.StateSuccess)
	if st.Context != github.StatusContext(b.App.Name) || !strings.HasSuffix(st.TargetURL, "/deployments/"+d.ID) {
		t.Errorf("last status of %s = %+v, want the application's context and the deployment's URL", sha1, st)
	}

	// A failing deployment of the next commit: the same comment says
	// failed, names the step and the error; the commit's status fails.
	sha2 := strings.Repeat("2", 40)
	bad := strings.Replace(good, web, "slipway-missing-"+strings.ToLower(swarmtest.ID())+":nope", 1)
	d2 := b.deployPreview(t, bad, sha2)
	pipelinetest.ExpectState(t, d2, store.StateFailed)
	progress, err := pipeline.ParseProgress(d2.Steps)
	must(t, err)
	failedStep := ""
	for _, s := range progress.Steps {
		if s.State != pipeline.StepSucceeded {
			failedStep = s.Name // failed, or running when the failure ended it
		}
	}
	if failedStep == "" {
		t.Fatalf("the failed deployment names no failed step: %s", d2.Steps)
	}
	cs = b.waitComment(t, func(cs []githubtest.Comment) bool {
		return len(cs) > 0 && strings.Contains(cs[len(cs)-1].Body, "Failed")
	})
	if len(cs) != 1 {
		t.Fatalf("want still exactly one comment, got %d", len(cs))
	}
	for _, want := range []string{"failed at step **" + failedStep + "**", d2.ErrorCode, sha2[:12]} {
		if !strings.Contains(cs[0].Body, want) {
			t.Errorf("failed comment lacks %q:\n%s", want, cs[0].Body)
		}
	}
	b.waitStatus(t, sha2, github.StateFailure)
}

// An application not connected to GitHub inserts no notification: the
// enqueue below counts any insert.
func TestGitHubNotify_UnconnectedApplicationInsertsNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := pipelinetest.Setup(t, "production")
	d, err := b.Store.CreateDeployment(ctx, b.Team.ID, store.DeploymentParams{EnvironmentID: b.Env.ID, Revision: b.SaveRevision(t, b.App.ID, notifyManifest(b.App.Name, "busybox:latest")), Origin: store.OriginBuild, Actor: "test"})
	must(t, err)
	calls := 0
	err = b.Store.WithTx(ctx, func(tx *store.Store) error {
		return jobs.NotifyGitHubTx(ctx, tx, func(context.Context, *store.Store, river.JobArgs) error { calls++; return nil }, d)
	})
	if err != nil || calls != 0 {
		t.Fatalf("NotifyGitHubTx for an unconnected application: %d inserts, %v", calls, err)
	}
}
