package service_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/runtime/build"
	"github.com/slipwayhq/slipway/store"
)

// syncedApp applies an application reading the bundle's repository with
// poll sync on.
func (b *previewBundle) syncedApp(t *testing.T, name string) store.Application {
	t.Helper()
	toml := fmt.Sprintf(previewApp, name, b.repo.url()) + `sync = { mode = "poll", interval_seconds = 60 }
`
	res, err := service.ApplyManifest(context.Background(), b.st, b.actor, b.enqueue, []byte(toml), service.ApplyOptions{AllowFileURLs: true})
	if err != nil {
		t.Fatal(err)
	}
	return res.Application
}

// fetchedBy records that deployment id read commit and ends it, as the
// pipeline does once a deployment captured (the test has no Swarm).
func (b *previewBundle) fetchedBy(t *testing.T, id, branch string, commit plumbing.Hash) {
	t.Helper()
	ctx := context.Background()
	if _, err := b.st.RecordDeploymentFetch(ctx, b.actor.TeamID, store.DeploymentFetch{
		DeploymentID: id, RepositoryURL: b.repo.url(), Branch: branch, Commit: commit.String(),
		ManifestPath: "slipway.toml", Manifest: []byte("x"),
	}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.TransitionDeployment(ctx, b.actor.TeamID, id, []store.DeploymentState{store.StateRequested}, store.StateCancelled); err != nil {
		t.Fatal(err)
	}
}

// deployRequests returns the deployments queued since the first n.
func (b *previewBundle) deployRequests(n int) []jobs.DeployArgs {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []jobs.DeployArgs
	for _, a := range b.queued {
		if d, ok := a.(jobs.DeployArgs); ok {
			out = append(out, d)
		}
	}
	return out[min(n, len(out)):]
}

// TestPreviewSync_FollowsPushes drives background sync over previews of a
// real repository: every preview of a moved branch redeploys once, at the
// listed head, sharing the pull-request flow's rules (a head either
// requested is not requested again) and keeping a local snapshot until
// its branch moves.
func TestPreviewSync_FollowsPushes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupPreviews(t, service.PreviewLimits{MaxPerApplication: 10, MaxTotal: 10})
	app := b.syncedApp(t, "synced")
	c1 := b.repo.commit()
	b.repo.setBranch("feat", c1)
	b.repo.setBranch("other", c1)

	create := func(branch, slot string) store.Environment {
		t.Helper()
		p, err := b.previews.Create(ctx, b.actor, b.enqueue, app.ID, service.PreviewRequest{Branch: branch, Slot: slot})
		if err != nil {
			t.Fatal(err)
		}
		return p.Environment
	}
	feat, agent, other := create("feat", ""), create("feat", "agent-1"), create("other", "")
	deployer := service.PreviewDeployer{Previews: b.previews, Enqueue: b.enqueue}
	now := time.Now()
	clock := func() time.Time { return now }
	worker := &jobs.SyncWorker{
		Store: b.st, Lister: &build.Lister{Now: clock}, AllowFileURLs: true, Now: clock,
		Enqueue: b.enqueue, Previews: deployer,
	}
	seen := 0
	poll := func(want int, why string) []store.Deployment {
		t.Helper()
		now = now.Add(2 * time.Minute)
		if err := worker.Work(ctx, &river.Job[jobs.SyncPollArgs]{}); err != nil {
			t.Fatal(err)
		}
		reqs := b.deployRequests(seen)
		seen += len(reqs)
		if len(reqs) != want {
			t.Fatalf("%s: sync requested %d deployments, want %d", why, len(reqs), want)
		}
		var out []store.Deployment
		for _, r := range reqs {
			d, err := b.st.GetDeployment(ctx, b.actor.TeamID, r.DeploymentID)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, d)
		}
		return out
	}
	byEnv := func(ds []store.Deployment) map[string]store.Deployment {
		out := map[string]store.Deployment{}
		for _, d := range ds {
			out[d.EnvironmentID] = d
		}
		return out
	}

	poll(0, "nothing follows before its first deployment")
	for _, env := range []store.Environment{feat, agent, other} {
		b.fetched(t, service.Preview{Environment: env}, c1)
	}
	poll(0, "every preview runs its branch head")

	// A push to feat redeploys both of its previews (slot or not), at the
	// listed head, attributed to sync; other stays.
	c2 := b.repo.commit()
	b.repo.setBranch("feat", c2)
	got := byEnv(poll(2, "feat moved"))
	for _, env := range []store.Environment{feat, agent} {
		d, ok := got[env.ID]
		if !ok {
			t.Fatalf("no deployment of %s after its branch moved", env.Slug)
		}
		if d.Actor != "sync:poll" {
			t.Errorf("%s deployed by %q, want sync:poll", env.Slug, d.Actor)
		}
		if ref, err := b.st.GetDeploymentRef(ctx, b.actor.TeamID, d.ID); err != nil || ref.Commit != c2.String() || ref.Branch != "feat" {
			t.Errorf("%s deployment reads %+v (%v), want feat at %s", env.Slug, ref, err, c2)
		}
	}
	events, err := b.st.ListEvents(ctx, b.actor.TeamID, store.EventFilter{Actor: "sync:poll", Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	synced := 0
	for _, e := range events {
		if e.Verb == jobs.VerbBranchSynced {
			synced++
		}
	}
	if synced != 2 {
		t.Errorf("%d branch_synced events, want 2", synced)
	}
	poll(0, "the same head while its deployments wait")

	// The pull request reporting the head sync requested gets that
	// deployment, not a second one.
	id, err := deployer.EnsurePreview(ctx, b.actor.TeamID, app.ID, "feat", c2.String())
	if err != nil {
		t.Fatal(err)
	}
	if id != got[feat.ID].ID {
		t.Errorf("pull request after sync got deployment %s, want sync's %s", id, got[feat.ID].ID)
	}
	if n := len(b.deployRequests(seen)); n != 0 {
		t.Fatalf("pull request after sync queued %d deployments, want none", n)
	}
	for _, d := range got {
		b.fetchedBy(t, d.ID, "feat", c2)
	}
	poll(0, "deployed heads")

	// The other way round: a head the pull request deployed first is not
	// deployed again by sync, even once that deployment failed.
	c3 := b.repo.commit()
	b.repo.setBranch("feat", c3)
	prID, err := deployer.EnsurePreview(ctx, b.actor.TeamID, app.ID, "feat", c3.String())
	if err != nil {
		t.Fatal(err)
	}
	seen++ // the pull request's deploy job
	if _, err := b.st.FailDeployment(ctx, b.actor.TeamID, prID, "build_failed", "failed by the test"); err != nil {
		t.Fatal(err)
	}
	if d := poll(1, "feat moved after the pull request deployed it"); d[0].EnvironmentID != agent.ID {
		t.Errorf("sync deployed %s, want only the slotted preview (the pull request deployed the other)", d[0].EnvironmentID)
	} else {
		b.fetchedBy(t, d[0].ID, "feat", c3)
	}

	// A local snapshot stays while its branch is at the head listed when
	// it was deployed, then follows the next push.
	b.repo.checkout("feat")
	bundle := b.repo.snapshot()
	b.repo.checkout("main")
	local, err := b.previews.DeployLocal(ctx, b.actor, b.enqueue, app.ID, service.LocalPreviewRequest{Slot: "agent-2", Bundle: bundle})
	if err != nil {
		t.Fatal(err)
	}
	seen++ // the snapshot's deploy job
	b.fetchedBy(t, local.Deployment.ID, "feat", plumbing.NewHash(local.Commit))
	poll(0, "a local snapshot on an unmoved branch")
	c4 := b.repo.commit()
	b.repo.setBranch("feat", c4)
	if got := byEnv(poll(3, "feat moved past the snapshot's head")); got[local.Environment.ID].ID == "" {
		t.Errorf("the local snapshot's preview was not redeployed after its branch moved: %v", got)
	}

	// Previews being deleted and gone branches deploy nothing.
	if _, err := b.previews.Delete(ctx, b.actor, b.enqueue, app.ID, other.Slug); err != nil {
		t.Fatal(err)
	}
	b.repo.setBranch("other", c4)
	b.repo.deleteBranch("feat")
	poll(0, "a preview being deleted, and a gone branch")
}
