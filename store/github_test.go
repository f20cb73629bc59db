package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/store"
)

func TestStore_GitHubInstallation(t *testing.T) {
	t.Parallel()
	b := setup(t)

	// Known from its webhook first, then bound by the setup callback.
	inst, err := b.st.UpsertGitHubInstallation(b.ctx, 10, "acme", "Organization")
	must(t, err)
	if inst.TeamID != "" || inst.Active() {
		t.Fatalf("unbound installation = %+v", inst)
	}
	inst, err = b.st.BindGitHubInstallation(b.ctx, b.a.team.ID, 10, b.a.owner.ID)
	must(t, err)
	if inst.TeamID != b.a.team.ID || inst.AccountLogin != "acme" || !inst.Active() {
		t.Fatalf("bound installation = %+v", inst)
	}
	_, err = b.st.BindGitHubInstallation(b.ctx, b.b.team.ID, 10, b.b.owner.ID)
	wantConflict(t, err, "installation_id", "installation_bound_elsewhere")
	_, err = b.st.GetGitHubInstallation(b.ctx, b.b.team.ID, 10)
	wantErr(t, err, store.ErrNotFound)
	list, err := b.st.ListGitHubInstallations(b.ctx, b.b.team.ID)
	must(t, err)
	if len(list) != 0 {
		t.Fatalf("team b sees %+v", list)
	}

	// Team b cannot link a repository through team a's installation.
	_, err = b.st.LinkGitHubRepository(b.ctx, b.b.team.ID, b.b.app.ID, 10, 1, "acme/notes")
	wantErr(t, err, store.ErrNotFound)
	link, err := b.st.LinkGitHubRepository(b.ctx, b.a.team.ID, b.a.app.ID, 10, 1, "acme/notes")
	must(t, err)
	if link.FullName != "acme/notes" {
		t.Fatalf("link = %+v", link)
	}
	links, err := b.st.ListGitHubRepositoryLinks(b.ctx, b.b.team.ID, 1)
	must(t, err)
	if len(links) != 0 {
		t.Fatalf("team b sees links %+v", links)
	}

	// Suspension keeps links; uninstalling drops them and refuses rebinding.
	must(t, b.st.SetGitHubInstallationSuspended(b.ctx, 10, true))
	inst, err = b.st.GetGitHubInstallation(b.ctx, b.a.team.ID, 10)
	must(t, err)
	if inst.Active() || inst.SuspendedAt == nil {
		t.Fatalf("suspended = %+v", inst)
	}
	must(t, b.st.SetGitHubInstallationSuspended(b.ctx, 10, false))
	must(t, b.st.DeleteGitHubInstallation(b.ctx, 10))
	_, err = b.st.GetGitHubRepositoryLink(b.ctx, b.a.team.ID, b.a.app.ID)
	wantErr(t, err, store.ErrNotFound)
	_, err = b.st.BindGitHubInstallation(b.ctx, b.a.team.ID, 10, b.a.owner.ID)
	wantErr(t, err, store.ErrNotFound)
}

func TestStore_GitHubDeliveryAndStates(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d := store.GitHubDelivery{DeliveryID: "d1", Event: "push", InstallationID: 5, Summary: json.RawMessage(`{"branch":"main"}`)}
	created, err := b.st.RecordGitHubDelivery(b.ctx, d)
	must(t, err)
	again, err := b.st.RecordGitHubDelivery(b.ctx, d)
	must(t, err)
	if !created || again {
		t.Fatalf("created = %v, again = %v", created, again)
	}
	must(t, b.st.MarkGitHubDeliveryProcessed(b.ctx, "d1", time.Now()))
	got, err := b.st.GetGitHubDelivery(b.ctx, "d1")
	must(t, err)
	if got.ProcessedAt == nil || got.InstallationID != 5 {
		t.Fatalf("delivery = %+v", got)
	}

	nonce := make([]byte, 16)
	exp := time.Now().Add(time.Minute)
	must(t, b.st.UseGitHubInstallState(b.ctx, b.a.team.ID, nonce, b.a.owner.ID, exp))
	wantErr(t, b.st.UseGitHubInstallState(b.ctx, b.a.team.ID, nonce, b.a.owner.ID, exp), store.ErrInstallStateUsed)
}

func TestStore_GitHubPullRequest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.st.UpsertGitHubInstallation(b.ctx, 10, "acme", "Organization")
	must(t, err)
	p := store.GitHubPullRequestParams{
		ApplicationID: b.a.app.ID, InstallationID: 10, RepositoryID: 1, FullName: "mallory/notes", Number: 3,
		HeadBranch: "main", HeadSHA: "aaa", AuthorLogin: "mallory", FromFork: true,
		Approval: store.ApprovalPending, Status: "approval_required",
	}
	pr, err := b.st.UpsertGitHubPullRequest(b.ctx, b.a.team.ID, p)
	must(t, err)
	_, err = b.st.UpsertGitHubPullRequest(b.ctx, b.b.team.ID, p)
	wantErr(t, err, store.ErrNotFound) // team b's app id is not a's

	id := int64(99)
	_, err = b.st.UpdateGitHubPullRequest(b.ctx, b.a.team.ID, pr.ID, store.GitHubPullRequestUpdate{CommentID: &id})
	must(t, err)
	_, err = b.st.ApproveGitHubPullRequest(b.ctx, b.b.team.ID, pr.ID, b.b.owner.ID)
	wantErr(t, err, store.ErrNotFound)
	approved, err := b.st.ApproveGitHubPullRequest(b.ctx, b.a.team.ID, pr.ID, b.a.owner.ID)
	must(t, err)
	if approved.Approval != store.ApprovalApproved || approved.ApprovedBy != b.a.owner.ID {
		t.Fatalf("approved = %+v", approved)
	}

	// A redelivery at the approved head keeps the approval and the comment;
	// a new head from the fork needs a new approval.
	same, err := b.st.UpsertGitHubPullRequest(b.ctx, b.a.team.ID, p)
	must(t, err)
	if same.ID != pr.ID || same.Approval != store.ApprovalApproved || same.CommentID != 99 {
		t.Fatalf("same head = %+v", same)
	}
	p.HeadSHA = "bbb"
	moved, err := b.st.UpsertGitHubPullRequest(b.ctx, b.a.team.ID, p)
	must(t, err)
	if moved.Approval != store.ApprovalPending || moved.CommentID != 99 {
		t.Fatalf("new head = %+v", moved)
	}
	pending, err := b.st.ListPendingGitHubPullRequests(b.ctx, b.a.team.ID, b.a.app.ID)
	must(t, err)
	if len(pending) != 1 {
		t.Fatalf("pending = %+v", pending)
	}
}
