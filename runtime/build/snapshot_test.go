package build

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/slipwayhq/slipway/gitsnapshot"
)

func TestCheckoutFromSnapshotFetchesNothing(t *testing.T) {
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wt, _ := repo.Worktree()
	if _, err := wt.Add("Dockerfile"); err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Commit("first", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "local.txt"), []byte("unpushed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, err := gitsnapshot.Create(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// The URL is never contacted: the commit comes from the snapshot.
	url := "https://repository.invalid/app.git"
	co, err := CheckoutRepository(context.Background(), CheckoutRequest{URL: url, Branch: snap.Branch, Commit: snap.Commit, Snapshot: snap.Bundle})
	if err != nil {
		t.Fatal(err)
	}
	defer co.Remove()
	if co.Commit != snap.Commit {
		t.Fatalf("checked out %s, want %s", co.Commit, snap.Commit)
	}
	for name, want := range map[string]string{"Dockerfile": "FROM scratch\n", "local.txt": "unpushed\n"} {
		got, err := os.ReadFile(filepath.Join(co.Dir, name))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q (%v), want %q", name, got, err, want)
		}
	}

	_, err = CheckoutRepository(context.Background(), CheckoutRequest{URL: url, Commit: snap.Base, Snapshot: snap.Bundle})
	if ErrorCode(err) != CodeSnapshotInvalid {
		t.Fatalf("checkout of another commit: %v, want %s", err, CodeSnapshotInvalid)
	}
	_, err = CheckoutRepository(context.Background(), CheckoutRequest{URL: url, Commit: snap.Commit, Snapshot: []byte(strings.Repeat("x", 10))})
	if ErrorCode(err) != CodeSnapshotInvalid {
		t.Fatalf("checkout of a broken bundle: %v, want %s", err, CodeSnapshotInvalid)
	}
}
