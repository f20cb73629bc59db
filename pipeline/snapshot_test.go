package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/slipwayhq/slipway/gitsnapshot"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/pipeline/pipelinetest"
	"github.com/slipwayhq/slipway/store"
)

// A deployment of a local snapshot reads the manifest and builds `self`
// from the uploaded bundle: uncommitted edits and untracked files deploy,
// although the commit exists nowhere but in the bundle.
func TestLocalSnapshot_DeploysUncommittedChanges(t *testing.T) {
	t.Parallel()
	b := setupSelfBuild(t)
	ctx := context.Background()

	dir := t.TempDir()
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: plumbing.Main}})
	must(t, err)
	write := func(name string, data []byte, perm os.FileMode) {
		t.Helper()
		must(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, name), data, perm))
	}
	write("bin/app", staticWebBinary(t), 0o755)
	write("Dockerfile", []byte("FROM scratch\nCOPY bin/app /app\nENTRYPOINT [\"/app\"]\n"), 0o644)
	write("slipway.toml", []byte(selfBuildManifest(b.App.Name, "committed")), 0o644)
	write(".gitignore", []byte("*.log\n"), 0o644)
	wt, err := repo.Worktree()
	must(t, err)
	must(t, wt.AddWithOptions(&git.AddOptions{All: true}))
	sig := &object.Signature{Name: "Test", Email: "test@example.com", When: time.Now()}
	base, err := wt.Commit("base", &git.CommitOptions{Author: sig, Committer: sig})
	must(t, err)
	b.Bootstrap(t, "file://"+dir, "main")

	// Uncommitted: the manifest's VERSION, a Dockerfile copying an
	// untracked file, and an ignored file.
	write("slipway.toml", []byte(selfBuildManifest(b.App.Name, "uncommitted")), 0o644)
	write("Dockerfile", []byte("FROM scratch\nCOPY bin/app /app\nCOPY local.txt /local.txt\nENTRYPOINT [\"/app\"]\n"), 0o644)
	write("local.txt", []byte("untracked\n"), 0o644)
	write("debug.log", []byte("ignored\n"), 0o644)
	snap, err := gitsnapshot.Create(dir, time.Now())
	must(t, err)

	app, err := b.Store.GetApplication(ctx, b.Team.ID, b.App.ID)
	must(t, err)
	d, err := b.Store.CreateDeployment(ctx, b.Team.ID, store.DeploymentParams{
		EnvironmentID: b.Env.ID, Revision: app.CurrentRevision, Origin: store.OriginBuild, Actor: "test",
	})
	must(t, err)
	must(t, b.Store.SetDeploymentRef(ctx, b.Team.ID, d.ID, store.GitRef{Branch: "main", Commit: snap.Commit}))
	must(t, b.Store.RecordDeploymentSnapshot(ctx, b.Team.ID, store.DeploymentSnapshot{
		DeploymentID: d.ID, Commit: snap.Commit, Base: snap.Base, Bundle: snap.Bundle,
	}))
	d = b.Advance(t, d.ID)
	pipelinetest.ExpectState(t, d, store.StateSucceeded)

	if v := envValue(t, d, "web", "VERSION"); v != "uncommitted" {
		t.Fatalf("VERSION %q, want the uncommitted manifest's", v)
	}
	f, err := b.Store.GetDeploymentFetch(ctx, b.Team.ID, d.ID)
	must(t, err)
	if f.Commit != snap.Commit || snap.Base != base.String() {
		t.Fatalf("fetched %s (base %s), want snapshot %s on %s", f.Commit, snap.Base, snap.Commit, base)
	}
	progress, err := pipeline.ParseProgress(d.Steps)
	must(t, err)
	if prep := progress.Find("prepare"); prep == nil || prep.Detail["commit:web"] != snap.Commit {
		t.Fatalf("prepare %+v, want web built from the snapshot %s", prep, snap.Commit)
	}
	if svcs := envServices(t, b, b.Env.ID); !svcs["web"] {
		t.Fatalf("services %v, want web", svcs)
	}
}
