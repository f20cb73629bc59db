package jobs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/store"
)

// GitHubNotifyArgs updates the pull request comment and commit status of
// one pull request row, or of every row whose preview is DeploymentID. The
// deployment pipeline inserts it with DeploymentID whenever a deployment
// changes state; it reads the current state, so extra jobs are harmless.
type GitHubNotifyArgs struct {
	TeamID        string `json:"team_id"`
	PullRequestID string `json:"pull_request_id,omitempty"`
	DeploymentID  string `json:"deployment_id,omitempty"`
}

// Kind is the job's stable name.
func (GitHubNotifyArgs) Kind() string { return "github_notify" }

// InsertOpts: notifications retry for a long while (a GitHub outage is
// waited out with River's backoff); they never hold a deployment up.
func (GitHubNotifyArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 20}
}

// GitHubNotifyWorker renders and upserts the comment, and sets the status.
type GitHubNotifyWorker struct {
	river.WorkerDefaults[GitHubNotifyArgs]
	deps GitHubDeps
}

// Work notifies every row the args name. Without any GitHub App there is
// nobody to tell: the job ends rather than retrying.
func (w *GitHubNotifyWorker) Work(ctx context.Context, job *river.Job[GitHubNotifyArgs]) error {
	if w.deps.GitHub == nil {
		return river.JobCancel(errors.New("github_not_configured: no GitHub client to notify"))
	}
	err := w.work(ctx, job)
	if errors.Is(err, github.ErrNotConfigured) {
		return river.JobCancel(err)
	}
	return err
}

func (w *GitHubNotifyWorker) work(ctx context.Context, job *river.Job[GitHubNotifyArgs]) error {
	st := w.deps.Store
	a := job.Args
	var prs []store.GitHubPullRequest
	switch {
	case a.PullRequestID != "":
		prs = append(prs, store.GitHubPullRequest{TeamID: a.TeamID, ID: a.PullRequestID})
	case a.DeploymentID != "":
		var err error
		if prs, err = st.ListGitHubPullRequestsByDeployment(ctx, a.TeamID, a.DeploymentID); err != nil {
			return err
		}
		if len(prs) == 0 {
			return w.locked(ctx, a.TeamID, "deployment:"+a.DeploymentID, func() error {
				return w.environmentStatus(ctx, a.TeamID, a.DeploymentID)
			})
		}
	}
	for _, pr := range prs {
		if err := w.locked(ctx, pr.TeamID, pr.ID, func() error { return w.notify(ctx, pr.TeamID, pr.ID) }); err != nil {
			return err
		}
	}
	return nil
}

// locked runs fn holding the lock of key, so the jobs of one pull request
// (or deployment) take turns: each reads the current state under the lock,
// so the last one to write renders the latest state, and two never create
// the comment twice. A job that finds the lock taken runs again shortly.
func (w *GitHubNotifyWorker) locked(ctx context.Context, teamID, key string, fn func() error) error {
	busy := false
	err := w.deps.Store.WithTx(ctx, func(tx *store.Store) error {
		ok, err := tx.TryGitHubNotifyLock(ctx, teamID, key)
		if err != nil {
			return err
		}
		if !ok {
			busy = true
			return nil
		}
		return fn()
	})
	if err == nil && busy {
		return river.JobSnooze(time.Second)
	}
	return err
}

// notify reads the pull request row afresh (under its lock) and brings its
// comment and status up to date.
func (w *GitHubNotifyWorker) notify(ctx context.Context, teamID, pullRequestID string) error {
	st := w.deps.Store
	pr, err := st.GetGitHubPullRequest(ctx, teamID, pullRequestID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	app, err := st.GetApplication(ctx, pr.TeamID, pr.ApplicationID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleted application: nothing to say
	}
	if err != nil {
		return err
	}
	data, err := w.commentData(ctx, pr, app)
	if err != nil {
		return err
	}
	id, err := w.deps.GitHub.UpsertComment(ctx, pr.InstallationID, pr.FullName, pr.Number, pr.ApplicationID, pr.CommentID, github.RenderComment(data))
	if err != nil {
		return err
	}
	if id != pr.CommentID {
		if _, err := st.UpdateGitHubPullRequest(ctx, pr.TeamID, pr.ID, store.GitHubPullRequestUpdate{CommentID: &id}); err != nil {
			return err
		}
	}
	state, desc := githubStatusOf(data.Status)
	if state == "" || pr.HeadSHA == "" {
		return nil
	}
	return w.deps.GitHub.CreateStatus(ctx, pr.InstallationID, pr.FullName, pr.HeadSHA, github.Status{
		State: state, Context: github.StatusContext(app.Name), Description: desc, TargetURL: data.DeploymentURL,
	})
}

// commentData reads what the comment shows: the row's status, refined by
// its deployment's state, steps and routes.
func (w *GitHubNotifyWorker) commentData(ctx context.Context, pr store.GitHubPullRequest, app store.Application) (github.CommentData, error) {
	data := github.CommentData{
		ApplicationID: pr.ApplicationID, ApplicationName: app.Name, Status: pr.Status, CommitSHA: pr.HeadSHA,
	}
	if w.deps.PublicURL != "" {
		data.ApprovalURL = w.deps.PublicURL + "/github#pull-requests"
	}
	if pr.DeploymentID == "" || pr.Status == github.CommentRemoved || pr.Status == github.CommentApprovalRequired {
		return data, nil
	}
	d, err := w.deps.Store.GetDeployment(ctx, pr.TeamID, pr.DeploymentID)
	if errors.Is(err, store.ErrNotFound) {
		return data, nil
	}
	if err != nil {
		return data, err
	}
	data.DeploymentURL = w.deps.deploymentURL(pr.TeamID, pr.ApplicationID, d.ID)
	data.Status = githubCommentStatus(d.State)
	if d.State == store.StateFailed || d.State == store.StateCancelled {
		data.FailedStep, data.Error = githubFailure(d)
	}
	hosts, err := w.deps.Store.ListHostnames(ctx, pr.TeamID, d.EnvironmentID)
	if err != nil {
		return data, err
	}
	for _, h := range hosts {
		if !h.Wildcard {
			data.Routes = append(data.Routes, github.RouteLink{Name: h.Hostname, URL: "https://" + h.Hostname})
		}
	}
	return data, nil
}

func githubCommentStatus(s store.DeploymentState) string {
	switch s {
	case store.StateCapturing, store.StatePreparing:
		return github.CommentBuilding
	case store.StateRunningJobs, store.StateRollingOut:
		return github.CommentDeploying
	case store.StateSucceeded:
		return github.CommentReady
	case store.StateFailed, store.StateCancelled:
		return github.CommentFailed
	}
	return github.CommentQueued // requested, or superseded by a newer one
}

// githubFailure names the failed step and its first error lines.
func githubFailure(d store.Deployment) (step, text string) {
	lines := []string{}
	if d.ErrorCode != "" || d.ErrorMessage != "" {
		lines = append(lines, strings.TrimSpace(d.ErrorCode+": "+d.ErrorMessage))
	}
	if p, err := pipeline.ParseProgress(d.Steps); err == nil {
		// The failed step, or the one the deployment was in when it failed
		// (a failure raised before the step recorded its own).
		for i := len(p.Steps) - 1; i >= 0; i-- {
			if s := p.Steps[i]; s.State == pipeline.StepFailed || (i == len(p.Steps)-1 && s.State == pipeline.StepRunning) {
				step = s.Name
				for _, t := range []string{s.Message, s.Output} {
					if t != "" && !strings.Contains(d.ErrorMessage, t) {
						lines = append(lines, t)
					}
				}
				break
			}
		}
	}
	if d.State == store.StateCancelled && step == "" {
		step = "cancelled"
	}
	return step, strings.Join(lines, "\n")
}

// githubStatusOf maps a comment status to a commit status; "" sets none (a PR
// waiting for approval has nothing running, and one closed has no head to
// judge).
func githubStatusOf(s string) (state, description string) {
	switch s {
	case github.CommentQueued, github.CommentBuilding, github.CommentDeploying:
		return github.StatePending, fmt.Sprintf("Preview %s", s)
	case github.CommentReady:
		return github.StateSuccess, "Preview ready"
	case github.CommentFailed:
		return github.StateFailure, "Preview failed"
	}
	return "", ""
}

// environmentStatus sets the commit status of a deployment that is no pull
// request's preview (a push deploy of an environment following a branch):
// on the environment's commit, when it has one and the application is
// linked to a repository.
func (w *GitHubNotifyWorker) environmentStatus(ctx context.Context, teamID, deploymentID string) error {
	st := w.deps.Store
	d, err := st.GetDeployment(ctx, teamID, deploymentID)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	env, err := st.GetEnvironment(ctx, teamID, d.EnvironmentID)
	if err != nil {
		return githubIgnoreMissing(err)
	}
	if env.Kind == store.KindPreview {
		// A preview's status belongs to its pull request's row, which the
		// preview job links to the deployment and notifies itself.
		return nil
	}
	link, err := st.GetGitHubRepositoryLink(ctx, teamID, d.ApplicationID)
	if err != nil {
		return githubIgnoreMissing(err)
	}
	app, err := st.GetApplication(ctx, teamID, d.ApplicationID)
	if err != nil {
		return githubIgnoreMissing(err)
	}
	state, _ := githubStatusOf(githubCommentStatus(d.State))
	commit, err := githubDeployedCommit(ctx, st, d, env)
	if err != nil || commit == "" || state == "" {
		return err
	}
	return w.deps.GitHub.CreateStatus(ctx, link.InstallationID, link.FullName, commit, github.Status{
		State: state, Context: github.StatusContext(app.Name) + "/" + env.Name,
		Description: fmt.Sprintf("%s: deployment %s", env.Name, d.State),
		TargetURL:   w.deps.deploymentURL(teamID, d.ApplicationID, d.ID),
	})
}

// githubDeployedCommit is the commit a deployment deploys: the one it
// fetched, else the one sync asked for, else the environment's pinned one.
func githubDeployedCommit(ctx context.Context, st *store.Store, d store.Deployment, env store.Environment) (string, error) {
	f, err := st.GetDeploymentFetch(ctx, d.TeamID, d.ID)
	if err == nil && f.Commit != "" {
		return f.Commit, nil
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return "", err
	}
	ref, err := st.GetDeploymentRef(ctx, d.TeamID, d.ID)
	if err == nil && ref.Commit != "" {
		return ref.Commit, nil
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return "", err
	}
	return env.Commit, nil
}
