package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/forge/github/githubtest"
	"github.com/slipwayhq/slipway/store"
)

// githubControls are the GitHub page's controls that change something.
var githubControls = []string{"github-connect", "github-repository-connect", "github-approve", "github-manifest-form", "github-credentials-form"}

// TestGitHubPage_ViewerSeesNoControls: with an installation, a repository
// and a pending pull request on the page, an owner gets Connect, Connect
// repository and Approve, and a viewer sees the same page without them.
func TestGitHubPage_ViewerSeesNoControls(t *testing.T) {
	fake := githubtest.New(t)
	fake.AddInstallation(55, "acme", githubtest.Repo{ID: 550, FullName: "acme/notes"}, githubtest.Repo{ID: 551, FullName: "acme/wiki"})
	b := setupGitHub(t, fake, true)
	owner := b.signup(t, "owner@example.com", "Acme")
	ctx := context.Background()
	actor := service.Actor{TeamID: owner.team.ID, UserID: owner.user.ID, Scopes: auth.ScopesOf(auth.RoleOwner)}
	saved, err := service.ApplyManifest(ctx, b.store, actor, nil, []byte("api_version = \"slipway.dev/v1alpha1\"\nkind = \"Application\"\n[metadata]\nname = \"notes\"\n"), service.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	appID := saved.Application.ID
	if _, err := b.store.BindGitHubInstallation(ctx, owner.team.ID, 55, owner.user.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.LinkGitHubRepository(ctx, owner.team.ID, appID, 55, 550, "acme/notes"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.UpsertGitHubPullRequest(ctx, owner.team.ID, store.GitHubPullRequestParams{
		ApplicationID: appID, InstallationID: 55, RepositoryID: 550, FullName: "acme/notes", Number: 12,
		HeadBranch: "patch-1", HeadSHA: strings.Repeat("c", 40), AuthorLogin: "mallory", FromFork: true,
		Approval: store.ApprovalPending, Status: github.CommentApprovalRequired,
	}); err != nil {
		t.Fatal(err)
	}
	viewer := b.addMember(t, owner.team, "viewer@example.com", store.RoleViewer)

	ownerPage := b.sessionBrowser(t, owner.user).get("/github")
	wantStatus(t, ownerPage, http.StatusOK)
	for _, id := range []string{"github-connect", "github-repository-connect", "github-approve"} {
		if testid(ownerPage, id).Length() == 0 {
			t.Errorf("the owner's /github lacks %s", id)
		}
	}

	r := b.sessionBrowser(t, viewer).get("/github")
	wantStatus(t, r, http.StatusOK)
	if testid(r, "github-repository").Length() == 0 || testid(r, "github-pull-request").Length() != 1 {
		t.Fatalf("the viewer does not see the repositories and the pull request:\n%s", truncate(r.body))
	}
	for _, id := range githubControls {
		if testid(r, id).Length() != 0 {
			t.Errorf("/github offers %s to a viewer", id)
		}
	}
}
