package chaos

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/app/api/client"
	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/forge/github/githubtest"
	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/test/chaos/chaostest"
	"github.com/slipwayhq/slipway/test/summary"
)

// TestGitHubOutageDelaysOnlyComments takes the (fake) GitHub API down with
// 503s while a pull request's deployment runs on real serve and worker
// processes: the deployment must succeed regardless, the notification must
// have been tried and refused, and once GitHub is back the comment and the
// commit status catch up with the deployment's outcome.
func TestGitHubOutageDelaysOnlyComments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bin := chaostest.Binary(t)
	url, st := chaostest.Database(t)
	pool := st.Pool()
	id := swarmtest.ID()
	team := chaostest.NewTeam(t, st, id)

	fake := githubtest.New(t)
	const installation, repoID, prNumber = 8101, 8102, 7
	fullName := "acme/outage-" + id
	headSHA := strings.Repeat("c", 40)
	fake.AddInstallation(installation, "acme", githubtest.Repo{ID: repoID, FullName: fullName, DefaultBranch: "main"})
	if _, err := st.UpsertGitHubInstallation(ctx, installation, "acme", "Organization"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.BindGitHubInstallation(ctx, team.Team.ID, installation, team.User.ID); err != nil {
		t.Fatal(err)
	}
	gh := chaostest.GitHubEnv(t, fake)
	// Before the processes start, so it runs after they are killed.
	envs := chaostest.Environments(t)
	srv := chaostest.StartServe(t, bin, url, gh...)
	chaostest.StartWorker(t, bin, url, "worker", gh...)
	c := team.Client(t, srv)

	fake.Down(http.StatusServiceUnavailable)
	web := swarmtest.Image(t, "web")
	app := "gh-" + id
	res, err := c.Apply(ctx, fmt.Appendf(nil, `api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[[spec.services]]
name = "web"
[spec.services.source]
type = "image"
image = %q
[spec.services.healthcheck]
type = "http"
port = 8080
interval_seconds = 2
timeout_seconds = 2
start_period_seconds = 30
retries = 5
`, app, web), client.ApplyOptions{Deploy: true})
	if err != nil {
		t.Fatal(err)
	}
	dep := res.Deployments[0]
	envs.Add(dep.EnvironmentID)
	// Connected to the repository: the pipeline notifies GitHub of its
	// deployments' states.
	if _, err := st.LinkGitHubRepository(ctx, team.Team.ID, res.Application.ID, installation, repoID, fullName); err != nil {
		t.Fatal(err)
	}
	pr, err := st.UpsertGitHubPullRequest(ctx, team.Team.ID, store.GitHubPullRequestParams{
		ApplicationID: res.Application.ID, InstallationID: installation, RepositoryID: repoID, FullName: fullName,
		Number: prNumber, HeadBranch: "feature", HeadSHA: headSHA, AuthorLogin: "dev", Approval: store.ApprovalAutomatic,
		Status: github.CommentQueued,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateGitHubPullRequest(ctx, team.Team.ID, pr.ID, store.GitHubPullRequestUpdate{DeploymentID: &dep.ID}); err != nil {
		t.Fatal(err)
	}

	// The pipeline queues github_notify as the deployment changes state
	// when the GitHub wiring is present; otherwise this test queues the
	// one such a state change would.
	chaostest.WaitFor(t, 3*time.Minute, "the deployment to start", func() bool {
		d, err := st.GetDeployment(ctx, team.Team.ID, dep.ID)
		if err != nil {
			t.Fatal(err)
		}
		return d.State != store.StateRequested
	})
	queuedBy := "the pipeline"
	if notifyJobs(t, pool, dep.ID) == 0 {
		queuedBy = "the test"
		inserter := insertClient(t, pool, st)
		if _, err := inserter.Insert(ctx, jobs.GitHubNotifyArgs{TeamID: team.Team.ID, DeploymentID: dep.ID}, nil); err != nil {
			t.Fatal(err)
		}
	}

	state, code, msg := chaostest.WaitDeployment(t, c, dep.ID, 4*time.Minute)
	if state != string(store.StateSucceeded) {
		t.Fatalf("deployment during the GitHub outage: %s %s %s", state, code, msg)
	}
	chaostest.WaitFor(t, time.Minute, "the notification to be tried during the outage", func() bool {
		return len(fake.Calls()) > 0
	})
	if got := fake.Comments(fullName, prNumber); len(got) != 0 {
		t.Fatalf("a comment was posted while GitHub was down: %+v", got)
	}
	refused := len(fake.Calls())
	fake.Up()

	// River's backoff (1 s, 16 s, 81 s...) decides when the next attempt
	// comes; the comment must follow without anything else happening.
	var comment githubtest.Comment
	chaostest.WaitFor(t, 3*time.Minute, "the comment and status to catch up", func() bool {
		cs := fake.Comments(fullName, prNumber)
		if len(cs) == 0 {
			return false
		}
		comment = cs[len(cs)-1]
		for _, s := range fake.Statuses(fullName) {
			if s.SHA == headSHA && s.State == github.StateSuccess {
				return true
			}
		}
		return false
	})
	if n := len(fake.Comments(fullName, prNumber)); n != 1 {
		t.Fatalf("%d comments on the pull request, want one", n)
	}
	if !strings.Contains(comment.Body, "Ready") && !strings.Contains(comment.Body, "ready") {
		t.Fatalf("the comment does not show the preview ready:\n%s", comment.Body)
	}
	summary.Fault(t, "GitHub API down (503)",
		"deployment %s succeeded during the outage; %d GitHub calls refused; github_notify (queued by %s) posted the comment and success status after recovery",
		dep.ID, refused, queuedBy)
}

// notifyJobs counts github_notify jobs for the deployment.
func notifyJobs(t *testing.T, pool *pgxpool.Pool, deploymentID string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM river_job
		WHERE kind = 'github_notify' AND args->>'deployment_id' = $1`, deploymentID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// insertClient is an insert-only River client knowing every job kind, as
// serve has.
func insertClient(t *testing.T, pool *pgxpool.Pool, st *store.Store) *jobs.Client {
	t.Helper()
	workers := river.NewWorkers()
	if err := jobs.Register(workers, jobs.Deps{Store: st}); err != nil {
		t.Fatal(err)
	}
	if err := jobs.RegisterGitHub(workers, jobs.GitHubDeps{Store: st}); err != nil {
		t.Fatal(err)
	}
	c, err := jobs.NewClient(pool, workers, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
