package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/store"
)

// BranchState is what a preview's branch looks like in the repository
// now, read on demand.
type BranchState string

// Branch states.
const (
	// BranchExists: the head is the commit the preview last fetched, or the
	// preview fetched nothing yet.
	BranchExists BranchState = "exists"
	// BranchMoved: the head is another commit than the one last fetched.
	BranchMoved BranchState = "moved"
	// BranchGone: the repository was listed and has no such branch.
	BranchGone BranchState = "gone"
	// BranchUnknown: the repository could not be read (or the ref is not a
	// branch it lists); never counts as gone.
	BranchUnknown BranchState = "unknown"
)

// PreviewStatus is a preview with its branch's state.
type PreviewStatus struct {
	Preview
	BranchState BranchState
	// Head is the branch head when the repository was read and has it.
	Head string
	// FetchedCommit is the commit the preview's latest repository read
	// fetched; "" before the first.
	FetchedCommit string
	// StateError says why the state is unknown.
	StateError string
	// Warnings are the preview bounds applied to the latest deployment.
	Warnings []string
	// SnapshotCommit and SnapshotBase are the local snapshot the latest
	// deployment deploys and the commit it was taken on (BranchLocal).
	SnapshotCommit, SnapshotBase string
}

// Deleting tells whether the preview is being deleted.
func (s PreviewStatus) Deleting() bool { return s.Environment.DeletingAt != nil }

// headsResult is one listing of the application's repository.
type headsResult struct {
	heads map[string]string
	err   error
}

// listHeads lists the repository's heads once; errors are kept, never
// turned into an empty listing.
func (p *Previews) listHeads(ctx context.Context, rev store.ManifestRevision) headsResult {
	url, ok := manifestRepository(rev)
	if !ok {
		return headsResult{err: errors.New("the application's manifest is not connected to a repository")}
	}
	if p.ListHeads == nil {
		return headsResult{err: errors.New("this server cannot list branches")}
	}
	heads, err := p.ListHeads(ctx, url)
	return headsResult{heads: heads, err: err}
}

// status computes the branch state of one preview from a listing.
func (p *Previews) status(ctx context.Context, pv Preview, h headsResult) (PreviewStatus, error) {
	out := PreviewStatus{Preview: pv}
	if pv.Deployment != nil {
		out.Warnings = pipeline.DeploymentWarnings(*pv.Deployment)
	}
	commit, err := p.Store.LastFetchedCommit(ctx, pv.Environment.TeamID, pv.Environment.ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return out, err
	}
	out.FetchedCommit = commit
	out.BranchState, out.Head, out.StateError = branchState(pv.Environment.Branch, commit, h)
	return out, p.localState(ctx, &out)
}

func branchState(branch, fetched string, h headsResult) (BranchState, string, string) {
	switch {
	case h.err != nil:
		return BranchUnknown, "", h.err.Error()
	case untrustedRef(branch):
		return BranchUnknown, "", "pull request refs are not branches; closing the pull request deletes its preview"
	}
	head, ok := h.heads[branch]
	switch {
	case !ok:
		return BranchGone, "", ""
	case fetched == "" || fetched == head:
		return BranchExists, head, ""
	}
	return BranchMoved, head, ""
}

// List returns the application's previews with their branch states, read
// with one listing of the repository.
func (p *Previews) List(ctx context.Context, a Actor, appID string) ([]PreviewStatus, error) {
	envs, err := p.Store.ListPreviews(ctx, a.TeamID, appID)
	if err != nil {
		return nil, err
	}
	if len(envs) == 0 {
		if _, err := p.Store.GetApplication(ctx, a.TeamID, appID); err != nil {
			return nil, err
		}
		return []PreviewStatus{}, nil
	}
	h := p.heads(ctx, a.TeamID, appID)
	out := make([]PreviewStatus, 0, len(envs))
	for _, env := range envs {
		pv, err := withLatestDeployment(ctx, p.Store, env)
		if err != nil {
			return nil, err
		}
		s, err := p.status(ctx, pv, h)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Show returns one preview with its branch state.
func (p *Previews) Show(ctx context.Context, a Actor, appID, slug string) (PreviewStatus, error) {
	pv, err := p.Get(ctx, a, appID, slug)
	if err != nil {
		return PreviewStatus{}, err
	}
	return p.status(ctx, pv, p.heads(ctx, a.TeamID, appID))
}

// heads lists the application's repository; an application that lost its
// repository connection reads as unknown.
func (p *Previews) heads(ctx context.Context, teamID, appID string) headsResult {
	rev, err := p.Store.GetCurrentManifestRevision(ctx, teamID, appID)
	if err != nil {
		return headsResult{err: fmt.Errorf("read the saved manifest: %w", err)}
	}
	return p.listHeads(ctx, rev)
}

// PruneResult is what pruning found and did.
type PruneResult struct {
	// Gone are the previews whose branch is gone: deleted when confirmed,
	// otherwise what a confirmed prune would delete.
	Gone []PreviewStatus
	// Kept are previews a confirmed prune was asked to delete but could no
	// longer confirm gone (the branch came back, or the repository could
	// not be read).
	Kept []PreviewStatus
	// Deleted is true when the prune was confirmed.
	Deleted bool
}

// PruneBranchGone finds the previews whose branch is gone. Unconfirmed, it
// only lists them. Confirmed, it reads the repository again and deletes
// those still gone among only (every gone one when only is empty);
// previews it cannot confirm gone are kept. A repository or authentication
// error is never gone: pruning then deletes nothing and fails with
// repository_unreachable.
func (p *Previews) PruneBranchGone(ctx context.Context, a Actor, enqueue Enqueue, appID string, confirm bool, only []string) (PruneResult, error) {
	out := PruneResult{Gone: []PreviewStatus{}, Kept: []PreviewStatus{}}
	statuses, err := p.List(ctx, a, appID)
	if err != nil {
		return out, err
	}
	wanted := map[string]bool{}
	for _, s := range only {
		wanted[s] = true
	}
	for _, s := range statuses {
		if s.BranchState == BranchUnknown && !untrustedRef(s.Environment.Branch) {
			return out, &InputError{Field: "repository", Code: "repository_unreachable",
				Message: "the repository could not be read, so no branch counts as gone: " + s.StateError}
		}
		if s.BranchState == BranchGone && !s.Deleting() && (len(wanted) == 0 || wanted[s.Environment.Slug]) {
			out.Gone = append(out.Gone, s)
		}
	}
	if !confirm || len(out.Gone) == 0 {
		return out, nil
	}
	out.Deleted = true
	// The daemon checks again right before deleting: a branch pushed back
	// since the list keeps its preview.
	h := p.heads(ctx, a.TeamID, appID)
	if h.err != nil {
		return PruneResult{Gone: []PreviewStatus{}, Kept: out.Gone}, &InputError{Field: "repository", Code: "repository_unreachable",
			Message: "the repository could not be read again, so nothing was deleted: " + h.err.Error()}
	}
	candidates := out.Gone
	out.Gone = []PreviewStatus{}
	err = p.Store.WithTx(ctx, func(tx *store.Store) error {
		for _, s := range candidates {
			if _, ok := h.heads[s.Environment.Branch]; ok {
				s.BranchState = BranchExists
				out.Kept = append(out.Kept, s)
				continue
			}
			env, err := p.markDeleting(ctx, tx, a.TeamID, a.String(), enqueue, s.Environment)
			if err != nil {
				return err
			}
			s.Environment = env
			out.Gone = append(out.Gone, s)
		}
		return nil
	})
	return out, err
}
