package service_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/gitsnapshot"
	"github.com/slipwayhq/slipway/store"
)

func TestPreviews_DeployLocalSnapshot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupPreviews(t, service.PreviewLimits{MaxPerApplication: 10, MaxTotal: 10})
	// A branch that exists only in this worktree: HEAD is on wip, which
	// the repository the daemon lists does not have (it is deleted right
	// after the snapshot).
	head := b.repo.commit()
	b.repo.setBranch("wip", head)
	if err := b.repo.repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName("wip"))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.repo.dir, "untracked.txt"), []byte("local only\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, err := gitsnapshot.Create(b.repo.dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.repo.repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName("main"))); err != nil {
		t.Fatal(err)
	}
	b.repo.deleteBranch("wip")

	p, err := b.previews.DeployLocal(ctx, b.actor, b.enqueue, b.app.ID, service.LocalPreviewRequest{Slot: "agent-1", Bundle: snap.Bundle})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Created || p.Environment.Branch != "wip" || p.Environment.Slot != "agent-1" || p.Deployment == nil {
		t.Fatalf("local deploy: created %v branch %q slot %q deployment %v", p.Created, p.Environment.Branch, p.Environment.Slot, p.Deployment)
	}
	if p.Commit != snap.Commit || p.Base != head.String() {
		t.Fatalf("commit %s base %s, want %s on %s", p.Commit, p.Base, snap.Commit, head)
	}
	ref, err := b.st.GetDeploymentRef(ctx, b.actor.TeamID, p.Deployment.ID)
	if err != nil || ref.Commit != snap.Commit || ref.Branch != "wip" {
		t.Fatalf("deployment ref %+v (%v), want wip at %s", ref, err, snap.Commit)
	}
	recorded, err := b.st.GetDeploymentSnapshot(ctx, b.actor.TeamID, p.Deployment.ID)
	if err != nil || recorded.Base != head.String() || string(recorded.Bundle) != string(snap.Bundle) {
		t.Fatalf("recorded snapshot base %s (%v), want %s with the uploaded bundle", recorded.Base, err, head)
	}
	if n := b.queuedKinds()["deploy"]; n != 1 {
		t.Fatalf("queued %v, want one deploy", b.queuedKinds())
	}

	// The branch was never pushed, yet the preview is local, not gone, so
	// pruning keeps it.
	list, err := b.previews.List(ctx, b.actor, b.app.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].BranchState != service.BranchLocal || list[0].SnapshotBase != head.String() || list[0].SnapshotCommit != snap.Commit {
		t.Fatalf("list %+v, want one local preview on %s", list, head)
	}
	pruned, err := b.previews.PruneBranchGone(ctx, b.actor, b.enqueue, b.app.ID, true, nil)
	if err != nil || len(pruned.Gone) != 0 {
		t.Fatalf("prune: %+v (%v), want nothing gone", pruned, err)
	}

	// Deploying again with the same slot reuses the preview.
	again, err := b.previews.DeployLocal(ctx, b.actor, b.enqueue, b.app.ID, service.LocalPreviewRequest{Slot: "agent-1", Bundle: snap.Bundle})
	if err != nil || again.Created || again.Environment.ID != p.Environment.ID || again.Deployment.ID == p.Deployment.ID {
		t.Fatalf("second local deploy: %+v (%v), want a new deployment of the same preview", again, err)
	}

	// Redeploying deploys the branch head: the preview is no longer local,
	// and its branch is gone.
	if _, err := b.previews.Deploy(ctx, b.actor, b.enqueue, b.app.ID, p.Environment.Slug); err != nil {
		t.Fatal(err)
	}
	show, err := b.previews.Show(ctx, b.actor, b.app.ID, p.Environment.Slug)
	if err != nil || show.BranchState != service.BranchGone {
		t.Fatalf("after redeploy: state %s (%v), want gone", show.BranchState, err)
	}

	// Anything but a snapshot bundle is refused before anything changes.
	_, err = b.previews.DeployLocal(ctx, b.actor, b.enqueue, b.app.ID, service.LocalPreviewRequest{Bundle: []byte("not a bundle")})
	var ie *service.InputError
	if !errors.As(err, &ie) || ie.Code != service.CodeSnapshotInvalid || ie.Field != "bundle" {
		t.Fatalf("invalid bundle: %v, want bundle snapshot_invalid", err)
	}
	// Another team cannot reach the application.
	other, err := b.st.CreateTeam(ctx, "Other", "other-team")
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.previews.DeployLocal(ctx, service.Actor{TeamID: other.ID, UserID: "usr_other"}, b.enqueue, b.app.ID, service.LocalPreviewRequest{Bundle: snap.Bundle})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("other team: %v, want not found", err)
	}
}

// checkout points the worktree's HEAD at branch (which need not exist).
func (r *previewRepo) checkout(branch string) {
	r.t.Helper()
	if err := r.repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(branch))); err != nil {
		r.t.Fatal(err)
	}
}

// snapshot snapshots the worktree, with an untracked change.
func (r *previewRepo) snapshot() []byte {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.dir, "untracked.txt"), []byte(time.Now().String()), 0o644); err != nil {
		r.t.Fatal(err)
	}
	snap, err := gitsnapshot.Create(r.dir, time.Now())
	if err != nil {
		r.t.Fatal(err)
	}
	return snap.Bundle
}

// localSnapshot deploys bundle as the preview of its branch.
func (b *previewBundle) localSnapshot(t *testing.T, bundle []byte) service.LocalPreview {
	t.Helper()
	p, err := b.previews.DeployLocal(context.Background(), b.actor, b.enqueue, b.app.ID, service.LocalPreviewRequest{Bundle: bundle})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Deploying on push (the pull-request flow) leaves a local snapshot running
// until its branch moves past the head listed when it was deployed, or is
// first pushed; then the push replaces it.
func TestPreviewDeployer_PushOverLocalSnapshot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupPreviews(t, service.PreviewLimits{MaxPerApplication: 10, MaxTotal: 10})
	dep := service.PreviewDeployer{Previews: b.previews, Enqueue: b.enqueue}

	t.Run("branch moves", func(t *testing.T) {
		b.repo.checkout("feat/local")
		pushed := b.repo.commit() // feat/local exists at pushed, the snapshot's base
		local := b.localSnapshot(t, b.repo.snapshot())
		if local.Base != pushed.String() {
			t.Fatalf("snapshot base %s, want %s", local.Base, pushed)
		}
		// The head the snapshot was taken on (a redelivery, a reopened
		// pull request) keeps it.
		id, err := dep.EnsurePreview(ctx, b.actor.TeamID, b.app.ID, "feat/local", pushed.String())
		if err != nil || id != local.Deployment.ID {
			t.Fatalf("push of the unmoved head: deployment %s (%v), want the snapshot %s kept", id, err, local.Deployment.ID)
		}
		latest, err := b.st.LatestDeployment(ctx, b.actor.TeamID, local.Environment.ID)
		if err != nil || latest.ID != local.Deployment.ID {
			t.Fatalf("latest deployment %s (%v), want the snapshot %s", latest.ID, err, local.Deployment.ID)
		}
		// A push that moves the branch replaces it.
		moved := b.repo.commit()
		id, err = dep.EnsurePreview(ctx, b.actor.TeamID, b.app.ID, "feat/local", moved.String())
		if err != nil || id == local.Deployment.ID {
			t.Fatalf("push of a new head: deployment %s (%v), want a new one", id, err)
		}
		ref, err := b.st.GetDeploymentRef(ctx, b.actor.TeamID, id)
		if err != nil || ref.Commit != moved.String() {
			t.Fatalf("replacing deployment ref %+v (%v), want %s", ref, err, moved)
		}
		// Once replaced, the preview follows pushes again: the same head
		// is the deployment just requested.
		again, err := dep.EnsurePreview(ctx, b.actor.TeamID, b.app.ID, "feat/local", moved.String())
		if err != nil || again != id {
			t.Fatalf("redelivered push: deployment %s (%v), want %s", again, err, id)
		}
	})

	t.Run("first push", func(t *testing.T) {
		// The snapshot is taken on a branch the repository does not have.
		base := b.repo.commit()
		b.repo.setBranch("feat/unpushed", base)
		b.repo.checkout("feat/unpushed")
		bundle := b.repo.snapshot()
		b.repo.checkout("main")
		b.repo.deleteBranch("feat/unpushed")
		local := b.localSnapshot(t, bundle)
		if local.Base != base.String() {
			t.Fatalf("snapshot base %s, want %s", local.Base, base)
		}
		// Its first push replaces it, even at the snapshot's own base.
		b.repo.setBranch("feat/unpushed", base)
		id, err := dep.EnsurePreview(ctx, b.actor.TeamID, b.app.ID, "feat/unpushed", base.String())
		if err != nil || id == local.Deployment.ID {
			t.Fatalf("first push: deployment %s (%v), want a new one replacing the snapshot %s", id, err, local.Deployment.ID)
		}
	})

	t.Run("repository unreadable", func(t *testing.T) {
		// Without a listing, the snapshot's base stands for the branch head.
		b.repo.checkout("feat/offline")
		base := b.repo.commit()
		b.mu.Lock()
		b.listErr = errors.New("ls-remote: connection refused")
		b.mu.Unlock()
		local := b.localSnapshot(t, b.repo.snapshot())
		b.mu.Lock()
		b.listErr = nil
		b.mu.Unlock()
		id, err := dep.EnsurePreview(ctx, b.actor.TeamID, b.app.ID, "feat/offline", base.String())
		if err != nil || id != local.Deployment.ID {
			t.Fatalf("push of the base: deployment %s (%v), want the snapshot %s kept", id, err, local.Deployment.ID)
		}
		moved := b.repo.commit()
		id, err = dep.EnsurePreview(ctx, b.actor.TeamID, b.app.ID, "feat/offline", moved.String())
		if err != nil || id == local.Deployment.ID {
			t.Fatalf("push past the base: deployment %s (%v), want a new one", id, err)
		}
	})
}
