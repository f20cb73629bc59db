package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

// DefaultRepositoryManifestPath is the manifest file an application
// connected to a GitHub repository reads unless it names another.
const DefaultRepositoryManifestPath = "slipway.toml"

// ApprovePullRequestPreview is the approve action of the dashboard, API
// and CLI: a member approves the preview of the application's pull request
// number (from a fork, or by an author without write permission), and the
// github_preview job is inserted in the same transaction. A pull request
// that waits for no approval is approval_not_pending.
func ApprovePullRequestPreview(ctx context.Context, st *store.Store, a Actor, enqueue Enqueue, appID string, number int) (store.GitHubPullRequest, error) {
	if number <= 0 {
		return store.GitHubPullRequest{}, &InputError{Field: "number", Code: "number_invalid", Message: "the pull request number must be a positive integer"}
	}
	link, err := st.GetGitHubRepositoryLink(ctx, a.TeamID, appID)
	if errors.Is(err, store.ErrNotFound) {
		return store.GitHubPullRequest{}, &InputError{Field: "application", Code: "github_not_connected", Message: "the application is not connected to a GitHub repository"}
	}
	if err != nil {
		return store.GitHubPullRequest{}, err
	}
	pr, err := st.FindGitHubPullRequest(ctx, a.TeamID, appID, link.RepositoryID, number)
	if err != nil {
		return store.GitHubPullRequest{}, err
	}
	if pr.Approval != store.ApprovalPending || pr.State != "open" {
		return store.GitHubPullRequest{}, &InputError{Field: "number", Code: "approval_not_pending",
			Message: fmt.Sprintf("pull request #%d of %s does not wait for an approval", number, link.FullName)}
	}
	if a.UserID == "" {
		return store.GitHubPullRequest{}, &InputError{Field: "actor", Code: "user_required", Message: "an approval is made by a member"}
	}
	if err := jobs.ApproveGitHubPreview(ctx, st, enqueue, a.TeamID, pr.ID, a.UserID); err != nil {
		if errors.Is(err, store.ErrNotFound) { // approved by someone else meanwhile
			return store.GitHubPullRequest{}, &InputError{Field: "number", Code: "approval_not_pending",
				Message: fmt.Sprintf("pull request #%d was approved meanwhile", number)}
		}
		return store.GitHubPullRequest{}, err
	}
	return st.GetGitHubPullRequest(ctx, a.TeamID, pr.ID)
}

// ConnectGitHubRepository makes the application repository-backed on a
// repository of the team's installation: its saved manifest gets
// spec.manifest (the repository's clone URL and default branch, the
// manifest path it had or slipway.toml, sync on webhook) through the same
// edit every other field uses, and the link that routes the repository's
// webhooks to it is stored. repo must come from the installation's own
// listing (through its token), never from user input.
func ConnectGitHubRepository(ctx context.Context, st *store.Store, a Actor, enqueue Enqueue, appID string, installationID int64, repo github.Repository) (store.GitHubRepositoryLink, error) {
	inst, err := st.GetGitHubInstallation(ctx, a.TeamID, installationID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !inst.Active()) {
		return store.GitHubRepositoryLink{}, &InputError{Field: "installation_id", Code: "installation_inactive",
			Message: "the GitHub installation is not connected to this team, or is suspended"}
	}
	if err != nil {
		return store.GitHubRepositoryLink{}, err
	}
	if repo.ID <= 0 || repo.CloneURL == "" || repo.FullName == "" {
		return store.GitHubRepositoryLink{}, &InputError{Field: "repository_id", Code: "repository_unknown", Message: "the installation cannot read that repository"}
	}
	branch := repo.DefaultBranch
	if branch == "" {
		branch = "main"
	}
	edit := func(m *manifest.Manifest) error {
		path := DefaultRepositoryManifestPath
		if m.Spec.Manifest != nil && m.Spec.Manifest.Path != "" {
			path = m.Spec.Manifest.Path
		}
		m.Spec.Manifest = &manifest.ManifestSource{
			Path:       path,
			Repository: &manifest.Repository{URL: repo.CloneURL, Branch: branch},
			Sync:       &manifest.Sync{Mode: manifest.SyncWebhook},
		}
		return nil
	}
	if _, err := EditManifest(ctx, st, a, enqueue, appID, nil, edit, false); err != nil {
		return store.GitHubRepositoryLink{}, err
	}
	var link store.GitHubRepositoryLink
	err = st.WithTx(ctx, func(tx *store.Store) error {
		var err error
		if link, err = tx.LinkGitHubRepository(ctx, a.TeamID, appID, installationID, repo.ID, repo.FullName); err != nil {
			return err
		}
		return record(ctx, tx, a, "github.repository_connected", "application", appID,
			map[string]any{"repository": repo.FullName, "installation_id": installationID})
	})
	return link, err
}
