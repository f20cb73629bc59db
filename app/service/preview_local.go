package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/slipwayhq/slipway/gitsnapshot"
	"github.com/slipwayhq/slipway/store"
)

// BranchLocal: the preview's latest deployment is a local snapshot
// (slipway preview deploy --local). It is never gone, so never pruned.
const BranchLocal BranchState = "local"

// CodeSnapshotInvalid: an uploaded local snapshot is not a bundle the CLI
// writes (gitsnapshot).
const CodeSnapshotInvalid = "snapshot_invalid"

// MaxSnapshotBytes bounds an uploaded local snapshot bundle.
const MaxSnapshotBytes = 100 << 20

// LocalPreviewRequest is a local worktree snapshot to deploy as the
// preview of its branch and slot.
type LocalPreviewRequest struct {
	Slot string
	// Bundle is the snapshot as gitsnapshot.Create writes it; its ref names
	// the branch.
	Bundle []byte
}

// LocalPreview is the preview a local snapshot was deployed to.
type LocalPreview struct {
	Preview
	Commit string
	Base   string
}

// DeployLocal deploys a local worktree snapshot as the preview of the
// snapshot's branch and req.Slot, creating the preview first if needed
// (as Create, without deploying the branch head). The deployment reads the
// manifest and `self` sources from the snapshot, and records the snapshot
// commit with its base.
func (p *Previews) DeployLocal(ctx context.Context, a Actor, enqueue Enqueue, appID string, req LocalPreviewRequest) (LocalPreview, error) {
	if len(req.Bundle) > MaxSnapshotBytes {
		return LocalPreview{}, &InputError{Field: "bundle", Code: CodeSnapshotInvalid,
			Message: fmt.Sprintf("the snapshot is %d bytes, more than the %d allowed", len(req.Bundle), MaxSnapshotBytes)}
	}
	b, err := gitsnapshot.Read(req.Bundle)
	if err != nil {
		return LocalPreview{}, &InputError{Field: "bundle", Code: CodeSnapshotInvalid, Message: err.Error()}
	}
	created, err := p.create(ctx, a.TeamID, a.String(), enqueue, appID, PreviewRequest{Branch: b.Branch, Slot: req.Slot})
	if err != nil {
		return LocalPreview{}, err
	}
	out := LocalPreview{Preview: created, Commit: b.Commit, Base: b.Base}
	_, rev, err := repositoryApplication(ctx, p.Store, a.TeamID, appID)
	if err != nil {
		return LocalPreview{}, err
	}
	pushedHead := p.pushedHead(ctx, rev, b.Branch, b.Base)
	err = p.Store.WithTx(ctx, func(tx *store.Store) error {
		env, err := tx.GetPreviewBySlug(ctx, a.TeamID, appID, created.Environment.Slug)
		if err != nil {
			return err
		}
		if env.DeletingAt != nil {
			return deleting(env)
		}
		d, err := requestPreviewDeployment(ctx, tx, a.TeamID, a.String(), enqueue, env, rev.Revision, b.Commit)
		if err != nil {
			return err
		}
		if err := tx.RecordDeploymentSnapshot(ctx, a.TeamID, store.DeploymentSnapshot{
			DeploymentID: d.ID, Commit: b.Commit, Base: b.Base, Bundle: req.Bundle,
		}); err != nil {
			return err
		}
		// The snapshot stands for the branch head listed now: deploying on
		// push leaves it running until the branch moves past that head, or
		// is first pushed ("" while the branch does not exist).
		if err := tx.MarkSyncRequested(ctx, a.TeamID, env.ID, pushedHead); err != nil {
			return err
		}
		out.Environment, out.Deployment = env, &d
		_, err = tx.RecordEvent(ctx, a.TeamID, store.EventParams{
			Actor: a.String(), Verb: "preview.local", ObjectType: "deployment", ObjectID: d.ID,
			Details: map[string]any{"environment": env.Name, "branch": env.Branch, "slot": env.Slot, "commit": b.Commit, "base": b.Base, "branch_head": pushedHead, "bytes": len(req.Bundle)},
		})
		return err
	})
	return out, err
}

// localState marks a preview whose latest deployment is a local snapshot.
func (p *Previews) localState(ctx context.Context, s *PreviewStatus) error {
	if s.Deployment == nil {
		return nil
	}
	commit, base, err := p.Store.DeploymentSnapshotCommits(ctx, s.Environment.TeamID, s.Deployment.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	s.BranchState, s.StateError = BranchLocal, ""
	s.SnapshotCommit, s.SnapshotBase = commit, base
	return nil
}

// pushedHead is the head of branch in the repository now, "" when the
// branch was never pushed. When the repository cannot be listed, the
// snapshot's base stands in for it: the commit the snapshot was taken on
// is where the branch was as far as its author knew.
func (p *Previews) pushedHead(ctx context.Context, rev store.ManifestRevision, branch, base string) string {
	h := p.listHeads(ctx, rev)
	if h.err != nil {
		return base
	}
	return h.heads[branch]
}

// keepsLocalSnapshot tells whether deploying headSHA on push leaves the
// preview's latest deployment d running: d is a local snapshot (not
// cancelled or superseded) and the branch has not moved past the head
// listed when it was deployed, nor been first pushed since.
func keepsLocalSnapshot(ctx context.Context, tx *store.Store, d store.Deployment, headSHA string) (bool, error) {
	if d.State == store.StateCancelled || d.State == store.StateSuperseded {
		return false, nil
	}
	if _, _, err := tx.DeploymentSnapshotCommits(ctx, d.TeamID, d.ID); errors.Is(err, store.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	head, err := tx.SyncRequestedCommit(ctx, d.TeamID, d.EnvironmentID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil && head != "" && head == headSHA, err
}
