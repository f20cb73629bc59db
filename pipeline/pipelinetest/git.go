package pipelinetest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

// GitRepo is a bare repository served over file://, committed to through
// an in-memory worktree.
type GitRepo struct {
	t    *testing.T
	dir  string
	repo *git.Repository
	fs   billy.Filesystem
	when time.Time
}

// NewGitRepo makes an empty bare repository whose default branch is main.
func NewGitRepo(t *testing.T) *GitRepo {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo.git")
	_, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		Bare: true, InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	must(t, err)
	fs := memfs.New()
	repo, err := git.Open(filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault()), fs)
	must(t, err)
	return &GitRepo{t: t, dir: dir, repo: repo, fs: fs, when: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}
}

// URL is the repository's file:// URL.
func (g *GitRepo) URL() string { return "file://" + g.dir }

// Write writes a file into the worktree.
func (g *GitRepo) Write(name string, content []byte, perm os.FileMode) {
	g.t.Helper()
	must(g.t, g.fs.MkdirAll(filepath.Dir(name), 0o755))
	f, err := g.fs.OpenFile(name, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, perm)
	must(g.t, err)
	_, err = f.Write(content)
	must(g.t, err)
	must(g.t, f.Close())
}

// Remove removes a file from the worktree.
func (g *GitRepo) Remove(name string) {
	g.t.Helper()
	must(g.t, g.fs.Remove(name))
}

// Commit commits the whole worktree and returns the commit hash.
func (g *GitRepo) Commit(msg string) string {
	g.t.Helper()
	w, err := g.repo.Worktree()
	must(g.t, err)
	must(g.t, w.AddWithOptions(&git.AddOptions{All: true}))
	g.when = g.when.Add(time.Minute)
	sig := &object.Signature{Name: "Test", Email: "test@example.com", When: g.when}
	h, err := w.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig, AllowEmptyCommits: true})
	must(g.t, err)
	return h.String()
}

// Branch switches the worktree to name, creating it at HEAD when missing.
func (g *GitRepo) Branch(name string) {
	g.t.Helper()
	w, err := g.repo.Worktree()
	must(g.t, err)
	ref := plumbing.NewBranchReferenceName(name)
	_, err = g.repo.Reference(ref, false)
	must(g.t, w.Checkout(&git.CheckoutOptions{Branch: ref, Create: err != nil, Keep: true}))
}

// Bootstrap saves a bootstrap manifest connecting the application to the
// repository's slipway.toml on branch.
func (b *Bundle) Bootstrap(t *testing.T, url, branch string) store.ManifestRevision {
	t.Helper()
	toml := fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q
[spec.manifest]
path = "slipway.toml"
repository = { url = %q, branch = %q }
sync = { mode = "poll", interval_seconds = 60 }
`, b.App.Name, url, branch)
	m, err := manifest.Decode([]byte(toml), "toml")
	must(t, err)
	if errs := manifest.Validate(m, manifest.ValidateOptions{}); len(errs) > 0 {
		t.Fatalf("bootstrap manifest invalid: %v", errs)
	}
	raw, err := json.Marshal(m)
	must(t, err)
	rev, err := b.Store.CreateManifestRevision(context.Background(), b.Team.ID, b.App.ID, store.RevisionParams{Manifest: raw, Source: toml, Author: "test"})
	must(t, err)
	return rev
}

// DeployCurrent asks for a build deployment of the application's current saved
// manifest in env and advances it.
func (b *Bundle) DeployCurrent(t *testing.T, env store.Environment) store.Deployment {
	t.Helper()
	ctx := context.Background()
	app, err := b.Store.GetApplication(ctx, b.Team.ID, b.App.ID)
	must(t, err)
	d, err := b.Store.CreateDeployment(ctx, b.Team.ID, store.DeploymentParams{
		EnvironmentID: env.ID, Revision: app.CurrentRevision, Origin: store.OriginBuild, Actor: "test",
	})
	must(t, err)
	return b.Advance(t, d.ID)
}
