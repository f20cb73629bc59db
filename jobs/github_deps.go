package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/store"
)

// GitHub jobs (github_*.go): the webhook intake (app/webhook) records each
// delivery and inserts one of github_push, github_pull_request or
// github_installation in the same transaction; those insert github_preview
// and github_notify. Every GitHub API call happens in these jobs, never in
// a deployment, so an outage delays a comment and nothing else.

// GitHubAPI is the part of *github.Client the jobs call.
type GitHubAPI interface {
	CollaboratorPermission(ctx context.Context, installationID int64, fullName, user string) (github.Permission, error)
	UpsertComment(ctx context.Context, installationID int64, fullName string, number int, applicationID string, knownID int64, body string) (int64, error)
	CreateStatus(ctx context.Context, installationID int64, fullName, sha string, s github.Status) error
}

// PreviewDeployer creates, redeploys and deletes the preview of a branch
// (the preview machinery implements it). EnsurePreview creates the preview
// when missing and deploys ref at headSHA, returning the deployment;
// DeletePreview removes the preview and everything it owns, and treats a
// missing preview as deleted.
type PreviewDeployer interface {
	EnsurePreview(ctx context.Context, teamID, appID, branch, headSHA string) (deploymentID string, err error)
	DeletePreview(ctx context.Context, teamID, appID, branch string) error
}

// BranchPushHook is told that a branch of an application's repository
// moved. It is a hint: the sync machinery lists heads itself and never
// deploys the commit a payload names.
type BranchPushHook interface {
	BranchPushed(ctx context.Context, teamID, appID, branch string) error
}

// GitHubDeps are what the GitHub workers need. Only Store is required to
// register them (serve registers them to insert); workers that lack the
// dependency they need cancel their job with a clear error.
type GitHubDeps struct {
	Store    *store.Store
	GitHub   GitHubAPI
	Previews PreviewDeployer
	Push     BranchPushHook
	// DeploymentURL links a deployment in the dashboard; nil gives
	// PublicURL + /applications/<app>/deployments/<deployment>.
	DeploymentURL func(teamID, appID, deploymentID string) string
	// PublicURL is the dashboard's base URL, e.g. https://slipway.example.com.
	PublicURL string
	Logger    *slog.Logger
	Now       func() time.Time
}

func (d GitHubDeps) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d GitHubDeps) logger() *slog.Logger {
	if d.Logger != nil {
		return d.Logger
	}
	return slog.Default()
}

func (d GitHubDeps) deploymentURL(teamID, appID, deploymentID string) string {
	if deploymentID == "" {
		return ""
	}
	if d.DeploymentURL != nil {
		return d.DeploymentURL(teamID, appID, deploymentID)
	}
	if d.PublicURL == "" {
		return ""
	}
	return d.PublicURL + "/applications/" + appID + "/deployments/" + deploymentID
}

// RegisterGitHub adds the GitHub workers. Call it beside Register in every
// process that builds a River client (serve inserts these kinds, worker
// works them).
func RegisterGitHub(workers *river.Workers, deps GitHubDeps) error {
	if deps.Store == nil {
		return errors.New("jobs: register github: GitHubDeps.Store is required")
	}
	return errors.Join(
		river.AddWorkerSafely(workers, &GitHubPushWorker{deps: deps}),
		river.AddWorkerSafely(workers, &GitHubPullRequestWorker{deps: deps}),
		river.AddWorkerSafely(workers, &GitHubInstallationWorker{deps: deps}),
		river.AddWorkerSafely(workers, &GitHubPreviewWorker{deps: deps}),
		river.AddWorkerSafely(workers, &GitHubNotifyWorker{deps: deps}),
	)
}

// GitHubDeliverySummary is what the intake keeps of a verified payload
// (github_webhook_deliveries.summary): the few fields the jobs read.
type GitHubDeliverySummary struct {
	RepositoryID int64  `json:"repository_id,omitempty"`
	FullName     string `json:"full_name,omitempty"`
	// push
	Branch string `json:"branch,omitempty"`
	// pull_request
	Number           int    `json:"number,omitempty"`
	HeadBranch       string `json:"head_branch,omitempty"`
	HeadSHA          string `json:"head_sha,omitempty"`
	HeadRepositoryID int64  `json:"head_repository_id,omitempty"`
	AuthorLogin      string `json:"author_login,omitempty"`
	// installation, installation_repositories
	AccountLogin        string  `json:"account_login,omitempty"`
	AccountType         string  `json:"account_type,omitempty"`
	RepositoriesRemoved []int64 `json:"repositories_removed,omitempty"`
}

// githubLoadDelivery reads a delivery and its summary; a missing delivery cannot
// be retried into existence.
func githubLoadDelivery(ctx context.Context, st *store.Store, id string) (store.GitHubDelivery, GitHubDeliverySummary, error) {
	d, err := st.GetGitHubDelivery(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return d, GitHubDeliverySummary{}, river.JobCancel(err)
	}
	if err != nil {
		return d, GitHubDeliverySummary{}, err
	}
	var s GitHubDeliverySummary
	if err := json.Unmarshal(d.Summary, &s); err != nil {
		return d, s, river.JobCancel(fmt.Errorf("delivery %s summary: %w", id, err))
	}
	return d, s, nil
}

// githubActiveTeam returns the team an installation is bound to, or "" when the
// installation is unknown, unbound, suspended or uninstalled: its events
// then act on nothing.
func githubActiveTeam(ctx context.Context, st *store.Store, installationID int64) (string, error) {
	inst, err := st.GitHubInstallationByID(ctx, installationID)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if !inst.Active() {
		return "", nil
	}
	return inst.TeamID, nil
}

// githubInsertTx inserts a follow-up job in tx with the River client running the
// current job, so it commits with the rows it acts on.
func githubInsertTx(ctx context.Context, tx *store.Store, args river.JobArgs) error {
	c, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return fmt.Errorf("insert %s: %w", args.Kind(), err)
	}
	if _, err := c.InsertTx(ctx, tx.Tx(), args, nil); err != nil {
		return fmt.Errorf("insert %s: %w", args.Kind(), err)
	}
	return nil
}

// finishDelivery marks the delivery processed; failing to is only logged,
// since the work is done.
func (d GitHubDeps) finishDelivery(ctx context.Context, id string) {
	if err := d.Store.MarkGitHubDeliveryProcessed(ctx, id, d.now()); err != nil {
		d.logger().WarnContext(ctx, "mark github delivery processed", "delivery_id", id, "error", err)
	}
}
