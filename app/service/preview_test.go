package service_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/runtime/build"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// previewRepo is a git repository on disk whose branches a test moves.
type previewRepo struct {
	t    *testing.T
	dir  string
	repo *git.Repository
	n    int
}

func newPreviewRepo(t *testing.T) *previewRepo {
	t.Helper()
	dir := t.TempDir()
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: plumbing.Main}})
	if err != nil {
		t.Fatal(err)
	}
	r := &previewRepo{t: t, dir: dir, repo: repo}
	r.commit()
	return r
}

func (r *previewRepo) url() string { return "file://" + r.dir }

// commit commits a change on the checked-out branch and returns its hash.
func (r *previewRepo) commit() plumbing.Hash {
	r.t.Helper()
	r.n++
	if err := os.WriteFile(filepath.Join(r.dir, "change.txt"), fmt.Appendf(nil, "%d\n", r.n), 0o644); err != nil {
		r.t.Fatal(err)
	}
	w, err := r.repo.Worktree()
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := w.Add("change.txt"); err != nil {
		r.t.Fatal(err)
	}
	sig := &object.Signature{Name: "Test", Email: "test@example.com", When: time.Date(2026, 3, 1, 0, r.n, 0, 0, time.UTC)}
	h, err := w.Commit(fmt.Sprintf("change %d", r.n), &git.CommitOptions{Author: sig, Committer: sig})
	if err != nil {
		r.t.Fatal(err)
	}
	return h
}

// setBranch points branch at hash, creating it.
func (r *previewRepo) setBranch(branch string, hash plumbing.Hash) {
	r.t.Helper()
	if err := r.repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(branch), hash)); err != nil {
		r.t.Fatal(err)
	}
}

func (r *previewRepo) deleteBranch(branch string) {
	r.t.Helper()
	if err := r.repo.Storer.RemoveReference(plumbing.NewBranchReferenceName(branch)); err != nil {
		r.t.Fatal(err)
	}
}

// previewBundle is a repository-backed application with a Previews
// service listing the real repository.
type previewBundle struct {
	st       *store.Store
	actor    service.Actor
	app      store.Application
	repo     *previewRepo
	previews *service.Previews

	mu     sync.Mutex
	queued []river.JobArgs
	// beforeList runs before each listing of the repository.
	beforeList func(n int)
	lists      int
	listErr    error
}

func (b *previewBundle) enqueue(_ context.Context, _ *store.Store, args river.JobArgs) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.queued = append(b.queued, args)
	return nil
}

func (b *previewBundle) queuedKinds() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]int{}
	for _, a := range b.queued {
		out[a.Kind()]++
	}
	return out
}

const previewApp = `api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q
[spec.manifest]
path = "slipway.toml"
repository = { url = %q, branch = "main" }
`

func setupPreviews(t *testing.T, limits service.PreviewLimits) *previewBundle {
	t.Helper()
	ctx := context.Background()
	st := storetest.New(t)
	team, err := st.CreateTeam(ctx, "Previews", "previews-team")
	if err != nil {
		t.Fatal(err)
	}
	b := &previewBundle{st: st, actor: service.Actor{TeamID: team.ID, UserID: "usr_test"}, repo: newPreviewRepo(t)}
	b.app = b.applyApp(t, "notes")
	b.previews = &service.Previews{
		Store: st, Limits: limits,
		ListHeads: func(ctx context.Context, url string) (map[string]string, error) {
			b.mu.Lock()
			b.lists++
			n, hook, listErr := b.lists, b.beforeList, b.listErr
			b.mu.Unlock()
			if hook != nil {
				hook(n)
			}
			if listErr != nil {
				return nil, listErr
			}
			return build.ListHeads(ctx, url, build.Auth{AllowFileURLs: true})
		},
	}
	return b
}

func (b *previewBundle) applyApp(t *testing.T, name string) store.Application {
	t.Helper()
	res, err := service.ApplyManifest(context.Background(), b.st, b.actor, b.enqueue,
		fmt.Appendf(nil, previewApp, name, b.repo.url()), service.ApplyOptions{AllowFileURLs: true})
	if err != nil {
		t.Fatal(err)
	}
	return res.Application
}

func (b *previewBundle) create(t *testing.T, branch, slot string, deploy bool) service.Preview {
	t.Helper()
	p, err := b.previews.Create(context.Background(), b.actor, b.enqueue, b.app.ID, service.PreviewRequest{Branch: branch, Slot: slot, Deploy: deploy})
	if err != nil {
		t.Fatalf("create preview of %s/%s: %v", branch, slot, err)
	}
	return p
}

func TestPreviews_CreateIsIdempotentPerBranchAndSlot(t *testing.T) {
	t.Parallel()
	b := setupPreviews(t, service.PreviewLimits{MaxPerApplication: 10, MaxTotal: 10})
	ctx := context.Background()

	first := b.create(t, "feat/Login", "", true)
	env := first.Environment
	if !first.Created || first.Deployment == nil {
		t.Fatalf("first create: created %v deployment %v, want a new preview with a deployment", first.Created, first.Deployment)
	}
	if want := manifest.PreviewSlug("notes", "feat/Login", ""); env.Slug != want || env.Name != want {
		t.Errorf("slug %q name %q, want both %q", env.Slug, env.Name, want)
	}
	if env.Kind != store.KindPreview || env.Branch != "feat/Login" || env.Untrusted {
		t.Errorf("preview %+v, want a trusted preview of feat/Login", env)
	}
	if got := b.queuedKinds()["deploy"]; got != 1 {
		t.Fatalf("%d deploy jobs queued, want 1", got)
	}

	again := b.create(t, "feat/Login", "", true)
	if again.Created || again.Environment.ID != env.ID || again.Deployment == nil || again.Deployment.ID != first.Deployment.ID {
		t.Fatalf("second create: %+v, want the same preview and its latest deployment", again)
	}
	if got := b.queuedKinds()["deploy"]; got != 1 {
		t.Fatalf("creating again queued a deployment (%d deploy jobs)", got)
	}

	slot := b.create(t, "feat/Login", "agent-2", false)
	if !slot.Created || slot.Environment.ID == env.ID || slot.Deployment != nil {
		t.Fatalf("slotted create: %+v, want a second preview, not deployed", slot)
	}

	// Redeploying queues a new deployment of the branch head.
	d, err := b.previews.Deploy(ctx, b.actor, b.enqueue, b.app.ID, env.Slug)
	if err != nil {
		t.Fatal(err)
	}
	if d.EnvironmentID != env.ID || d.ID == first.Deployment.ID {
		t.Fatalf("deploy gave %+v, want a new deployment of the preview", d)
	}

	// Previews are not environments: they stay out of the preview list of
	// another application and keep their slug when the app is renamed.
	list, err := b.previews.List(ctx, b.actor, b.app.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("list has %d previews, want 2", len(list))
	}

	_, err = b.previews.Create(ctx, b.actor, b.enqueue, b.app.ID, service.PreviewRequest{Branch: "bad..branch"})
	wantCodes(t, err, "branch_invalid")
	_, err = b.previews.Create(ctx, b.actor, b.enqueue, b.app.ID, service.PreviewRequest{Branch: "main", Slot: "a slot"})
	wantCodes(t, err, "slot_invalid")
}

func TestPreviews_RequireRepository(t *testing.T) {
	t.Parallel()
	b := setupPreviews(t, service.PreviewLimits{MaxPerApplication: 10, MaxTotal: 10})
	res, err := service.ApplyManifest(context.Background(), b.st, b.actor, b.enqueue, []byte(header+webService), service.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.previews.Create(context.Background(), b.actor, b.enqueue, res.Application.ID, service.PreviewRequest{Branch: "main", Deploy: true})
	wantCodes(t, err, service.CodePreviewRequiresRepository)
}

func TestPreviews_Limits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupPreviews(t, service.PreviewLimits{MaxPerApplication: 2, MaxTotal: 3})
	b.create(t, "a", "", false)
	b.create(t, "b", "", false)
	_, err := b.previews.Create(ctx, b.actor, b.enqueue, b.app.ID, service.PreviewRequest{Branch: "c"})
	wantCodes(t, err, service.CodePreviewLimitReached)
	// An existing preview is still returned at the limit.
	if p := b.create(t, "a", "", false); p.Created {
		t.Fatal("creating an existing preview at the limit created one")
	}

	other := b.applyApp(t, "other")
	if _, err := b.previews.Create(ctx, b.actor, b.enqueue, other.ID, service.PreviewRequest{Branch: "a"}); err != nil {
		t.Fatalf("third preview in total: %v", err)
	}
	_, err = b.previews.Create(ctx, b.actor, b.enqueue, other.ID, service.PreviewRequest{Branch: "b"})
	wantCodes(t, err, service.CodePreviewLimitReached)

	b.previews.Limits = service.PreviewLimits{}
	_, err = b.previews.Create(ctx, b.actor, b.enqueue, other.ID, service.PreviewRequest{Branch: "z"})
	wantCodes(t, err, service.CodePreviewLimitReached)
}

// fetched records that the preview's deployment read commit, as the
// pipeline does when it captures a repository-backed deployment.
func (b *previewBundle) fetched(t *testing.T, p service.Preview, commit plumbing.Hash) {
	t.Helper()
	ctx := context.Background()
	d, err := b.st.CreateDeployment(ctx, b.actor.TeamID, store.DeploymentParams{EnvironmentID: p.Environment.ID, Revision: 1, Origin: store.OriginBuild, Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.RecordDeploymentFetch(ctx, b.actor.TeamID, store.DeploymentFetch{
		DeploymentID: d.ID, RepositoryURL: b.repo.url(), Branch: p.Environment.Branch, Commit: commit.String(),
		ManifestPath: "slipway.toml", Manifest: []byte("x"),
	}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.TransitionDeployment(ctx, b.actor.TeamID, d.ID, []store.DeploymentState{store.StateRequested}, store.StateCancelled); err != nil {
		t.Fatal(err)
	}
}

func states(list []service.PreviewStatus) map[string]service.BranchState {
	out := map[string]service.BranchState{}
	for _, s := range list {
		out[s.Environment.Branch] = s.BranchState
	}
	return out
}

func TestPreviews_BranchStatesAndPrune(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupPreviews(t, service.PreviewLimits{MaxPerApplication: 10, MaxTotal: 10})
	head := b.repo.commit()
	for _, br := range []string{"moving", "steady", "fresh", "doomed"} {
		b.repo.setBranch(br, head)
	}
	moving := b.create(t, "moving", "", false)
	steady := b.create(t, "steady", "", false)
	b.create(t, "fresh", "", false)
	doomed := b.create(t, "doomed", "", false)
	fork := b.create(t, "pull/7/head", "", false)
	if !fork.Environment.Untrusted {
		t.Error("a preview of a pull/<n>/head ref is not untrusted")
	}
	b.fetched(t, moving, head)
	b.fetched(t, steady, head)
	b.repo.setBranch("moving", b.repo.commit())
	b.repo.deleteBranch("doomed")

	list, err := b.previews.List(ctx, b.actor, b.app.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]service.BranchState{
		"moving": service.BranchMoved, "steady": service.BranchExists, "fresh": service.BranchExists,
		"doomed": service.BranchGone, "pull/7/head": service.BranchUnknown,
	}
	if got := states(list); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("branch states %v, want %v", got, want)
	}

	// Unconfirmed, prune lists and deletes nothing.
	res, err := b.previews.PruneBranchGone(ctx, b.actor, b.enqueue, b.app.ID, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted || len(res.Gone) != 1 || res.Gone[0].Environment.ID != doomed.Environment.ID {
		t.Fatalf("unconfirmed prune %+v, want doomed listed, nothing deleted", res)
	}

	// The branch comes back between the list and the daemon's own check:
	// the preview is kept.
	b.mu.Lock()
	start := b.lists
	b.beforeList = func(n int) {
		if n == start+2 {
			b.repo.setBranch("doomed", head)
		}
	}
	b.mu.Unlock()
	res, err = b.previews.PruneBranchGone(ctx, b.actor, b.enqueue, b.app.ID, true, []string{doomed.Environment.Slug})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Gone) != 0 || len(res.Kept) != 1 {
		t.Fatalf("prune with the branch back: %+v, want it kept", res)
	}
	if b.queuedKinds()["preview_delete"] != 0 {
		t.Fatal("a preview whose branch came back was queued for deletion")
	}

	// A repository that cannot be read is never gone: nothing is deleted.
	b.mu.Lock()
	b.beforeList = nil
	b.listErr = errors.New("authentication required")
	b.mu.Unlock()
	b.repo.deleteBranch("doomed")
	_, err = b.previews.PruneBranchGone(ctx, b.actor, b.enqueue, b.app.ID, true, nil)
	wantCodes(t, err, "repository_unreachable")
	list, err = b.previews.List(ctx, b.actor, b.app.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		if s.BranchState != service.BranchUnknown || s.Deleting() {
			t.Fatalf("with the repository unreadable %s is %s (deleting %v), want unknown and kept", s.Environment.Branch, s.BranchState, s.Deleting())
		}
	}

	b.mu.Lock()
	b.listErr = nil
	b.mu.Unlock()
	res, err = b.previews.PruneBranchGone(ctx, b.actor, b.enqueue, b.app.ID, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Deleted || len(res.Gone) != 1 || !res.Gone[0].Deleting() {
		t.Fatalf("confirmed prune %+v, want doomed being deleted", res)
	}
	if b.queuedKinds()["preview_delete"] != 1 {
		t.Fatalf("queued %v, want one preview_delete", b.queuedKinds())
	}
}

func TestPreviews_DeleteAndPullRequestDeployer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupPreviews(t, service.PreviewLimits{MaxPerApplication: 10, MaxTotal: 10})
	p := b.create(t, "feat/x", "", true)

	env, err := b.previews.Delete(ctx, b.actor, b.enqueue, b.app.ID, p.Environment.Slug)
	if err != nil {
		t.Fatal(err)
	}
	if env.DeletingAt == nil {
		t.Fatal("deleted preview is not marked deleting")
	}
	d, err := b.st.GetDeployment(ctx, b.actor.TeamID, p.Deployment.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.State != store.StateCancelled {
		t.Errorf("waiting deployment is %s after delete, want cancelled", d.State)
	}
	if b.queuedKinds()["preview_delete"] != 1 {
		t.Fatalf("queued %v, want a preview_delete", b.queuedKinds())
	}
	_, err = b.previews.Create(ctx, b.actor, b.enqueue, b.app.ID, service.PreviewRequest{Branch: "feat/x"})
	wantCodes(t, err, service.CodePreviewDeleting)
	_, err = b.previews.Deploy(ctx, b.actor, b.enqueue, b.app.ID, p.Environment.Slug)
	wantCodes(t, err, service.CodePreviewDeleting)
	// Deleting again is accepted.
	if _, err := b.previews.Delete(ctx, b.actor, b.enqueue, b.app.ID, p.Environment.Slug); err != nil {
		t.Fatal(err)
	}

	dep := service.PreviewDeployer{Previews: b.previews, Enqueue: b.enqueue}
	const sha = "0123456789abcdef0123456789abcdef01234567"
	id, err := dep.EnsurePreview(ctx, b.actor.TeamID, b.app.ID, "feat/pr", sha)
	if err != nil {
		t.Fatal(err)
	}
	again, err := dep.EnsurePreview(ctx, b.actor.TeamID, b.app.ID, "feat/pr", sha)
	if err != nil {
		t.Fatal(err)
	}
	if again != id {
		t.Errorf("ensuring the same head twice gave deployments %s and %s, want one", id, again)
	}
	ref, err := b.st.GetDeploymentRef(ctx, b.actor.TeamID, id)
	if err != nil || ref.Commit != sha || ref.Branch != "feat/pr" {
		t.Errorf("deployment ref %+v (%v), want feat/pr at %s", ref, err, sha)
	}
	next, err := dep.EnsurePreview(ctx, b.actor.TeamID, b.app.ID, "feat/pr", "1123456789abcdef0123456789abcdef01234567")
	if err != nil || next == id {
		t.Errorf("a new head gave %s (%v), want a new deployment", next, err)
	}
	forkID, err := dep.EnsurePreview(ctx, b.actor.TeamID, b.app.ID, "pull/9/head", sha)
	if err != nil {
		t.Fatal(err)
	}
	forkDep, err := b.st.GetDeployment(ctx, b.actor.TeamID, forkID)
	if err != nil {
		t.Fatal(err)
	}
	forkEnv, err := b.st.GetEnvironment(ctx, b.actor.TeamID, forkDep.EnvironmentID)
	if err != nil || !forkEnv.Untrusted {
		t.Errorf("fork preview %+v (%v), want untrusted", forkEnv, err)
	}

	if err := dep.DeletePreview(ctx, b.actor.TeamID, b.app.ID, "no/such/branch"); err != nil {
		t.Errorf("deleting a missing preview: %v", err)
	}
	if err := dep.DeletePreview(ctx, b.actor.TeamID, b.app.ID, "feat/pr"); err != nil {
		t.Fatal(err)
	}
	pr, err := b.st.GetPreview(ctx, b.actor.TeamID, b.app.ID, "feat/pr", "")
	if err != nil || pr.DeletingAt == nil {
		t.Errorf("pull request preview after DeletePreview: %+v (%v), want it being deleted", pr, err)
	}
}
