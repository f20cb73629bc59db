package gitsnapshot

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// repoState is everything a snapshot must leave alone: the status, every
// ref, the index file and the set of files under .git.
func repoState(t *testing.T, repo *git.Repository, dir string) string {
	t.Helper()
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	st, err := wt.Status()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for name, s := range st {
		lines = append(lines, "status "+name+" "+string(s.Staging)+string(s.Worktree))
	}
	refs, err := repo.References()
	if err != nil {
		t.Fatal(err)
	}
	_ = refs.ForEach(func(r *plumbing.Reference) error {
		lines = append(lines, "ref "+r.String())
		return nil
	})
	_ = filepath.WalkDir(filepath.Join(dir, ".git"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			data, _ := os.ReadFile(p)
			lines = append(lines, "file "+p+" "+plumbing.ComputeHash(plumbing.BlobObject, data).String())
		}
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func TestCreateSnapshotsWorktreeWithoutTouchingRepository(t *testing.T) {
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "slipway.toml", "v1\n")
	write(t, dir, "src/main.go", "package main\n")
	write(t, dir, ".gitignore", "*.log\nbuild/\n")
	write(t, dir, "keep.log", "tracked although ignored\n")
	wt, _ := repo.Worktree()
	for _, f := range []string{"slipway.toml", "src/main.go", ".gitignore"} {
		if _, err := wt.Add(f); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := wt.Add("keep.log"); err != nil {
		t.Fatal(err)
	}
	sig := &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1700000000, 0)}
	base, err := wt.Commit("first", &git.CommitOptions{Author: sig})
	if err != nil {
		t.Fatal(err)
	}
	// Uncommitted: an edit, a staged new file, an untracked file, ignored
	// files and directories, and a deleted tracked file.
	write(t, dir, "slipway.toml", "v2 uncommitted\n")
	write(t, dir, "staged.txt", "staged\n")
	if _, err := wt.Add("staged.txt"); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "src/new.go", "package main // untracked\n")
	write(t, dir, "debug.log", "ignored\n")
	write(t, dir, "build/out.bin", "ignored dir\n")
	if err := os.Remove(filepath.Join(dir, "src", "main.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "staged.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := repoState(t, repo, dir)

	snap, err := Create(filepath.Join(dir, "src"), time.Unix(1700000100, 0))
	if err != nil {
		t.Fatal(err)
	}
	if after := repoState(t, repo, dir); after != before {
		t.Fatalf("repository changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if snap.Base != base.String() || snap.Branch != "master" {
		t.Fatalf("snapshot base %s branch %s, want %s master", snap.Base, snap.Branch, base)
	}
	if _, err := repo.CommitObject(plumbing.NewHash(snap.Commit)); err == nil {
		t.Fatal("the snapshot commit was written to the repository's object database")
	}

	b, err := Read(snap.Bundle)
	if err != nil {
		t.Fatal(err)
	}
	if b.Commit != snap.Commit || b.Base != base.String() || b.Branch != "master" {
		t.Fatalf("bundle %+v, want commit %s base %s", b, snap.Commit, base)
	}
	c, err := b.Repository.CommitObject(plumbing.NewHash(b.Commit))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ParentHashes) != 1 || c.ParentHashes[0] != base {
		t.Fatalf("parents %v, want %s", c.ParentHashes, base)
	}
	tree, _ := c.Tree()
	got := map[string]string{}
	_ = tree.Files().ForEach(func(f *object.File) error {
		s, _ := f.Contents()
		got[f.Name] = s + " " + f.Mode.String()
		return nil
	})
	want := map[string]string{
		".gitignore":   "*.log\nbuild/\n 0100644",
		"keep.log":     "tracked although ignored\n 0100644",
		"slipway.toml": "v2 uncommitted\n 0100644",
		"src/new.go":   "package main // untracked\n 0100644",
		"staged.txt":   "staged\n 0100755",
	}
	if len(got) != len(want) {
		t.Fatalf("snapshot files %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

func TestReadRefusesOtherBundles(t *testing.T) {
	for name, data := range map[string][]byte{
		"empty":       nil,
		"v3":          []byte("# v3 git bundle\n"),
		"no base":     []byte("# v2 git bundle\n" + strings.Repeat("a", 40) + " refs/heads/main\n\nPACK"),
		"tag ref":     []byte("# v2 git bundle\n-" + strings.Repeat("b", 40) + "\n" + strings.Repeat("a", 40) + " refs/tags/v1\n\nPACK"),
		"broken pack": []byte("# v2 git bundle\n-" + strings.Repeat("b", 40) + "\n" + strings.Repeat("a", 40) + " refs/heads/main\n\nPACKxx"),
	} {
		if _, err := Read(data); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err %v, want ErrInvalid", name, err)
		}
	}
}
