package build

import (
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// A fork's pull request: its commit is reachable only from
// refs/pull/1/head (no branch of the repository has it), as on GitHub.
// The server refuses wanting a commit by hash (git http-backend's
// default), so the pinned checkout falls back to fetching refs, and must
// fetch the pull ref explicitly to find the commit.
func TestCheckoutRepository_PullRequestRef(t *testing.T) {
	t.Parallel()
	b := setupRepo(t)
	r := b.repo
	r.branch("fork")
	r.write("FORK", []byte("from a fork\n"), 0o644)
	head := r.commit("fork change")
	r.branch("main")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(r.repo.Storer.SetReference(plumbing.NewHashReference("refs/pull/1/head", plumbing.NewHash(head))))
	must(r.repo.Storer.RemoveReference(plumbing.NewBranchReferenceName("fork")))
	base := serveGit(t, b.root, "", "")

	for _, tt := range []struct{ name, url, commit string }{
		{name: "http pinned", url: base + "/app.git", commit: head},
		{name: "http head", url: base + "/app.git"},
		{name: "file pinned", url: r.url(), commit: head},
		{name: "file head", url: r.url()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			co := mustCheckout(t, CheckoutRequest{URL: tt.url, Branch: "pull/1/head", Commit: tt.commit})
			if co.Commit != head || readCheckout(t, co, "FORK") != "from a fork\n" {
				t.Fatalf("checkout = %s, want the pull request's head %s", co.Commit, head)
			}
		})
	}
	t.Run("missing pull request", func(t *testing.T) {
		t.Parallel()
		_, err := CheckoutRepository(t.Context(), CheckoutRequest{URL: base + "/app.git", Branch: "pull/2/head", Dir: t.TempDir(), Auth: local})
		wantCode(t, err, CodeBranchNotFound)
	})
}

func TestPullRequestRef(t *testing.T) {
	for branch, want := range map[string]string{
		"pull/7/head": "refs/pull/7/head",
		"pull/x/head": "",
		"pull//head":  "",
		"pull/7":      "",
		"feature":     "",
	} {
		got, ok := pullRequestRef(branch)
		if string(got) != want || ok != (want != "") {
			t.Errorf("pullRequestRef(%q) = %q, %v; want %q", branch, got, ok, want)
		}
	}
}
