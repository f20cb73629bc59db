package jobs_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/pipeline/pipelinetest"
	"github.com/slipwayhq/slipway/runtime/build"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
)

// TestSync_DeploysAMovedBranchOnce: a push to the branch a
// repository-backed environment follows with poll sync gets exactly one
// deployment, even when the job runs twice (and once more after the
// interval), and none once that head is deployed.
func TestSync_DeploysAMovedBranchOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := pipelinetest.Setup(t, "production")
	b.Pipeline.AllowFileURLs = true
	// The environment follows the manifest's branch and deploys on push.
	on := true
	_, err := b.Store.UpdateEnvironment(ctx, b.Team.ID, b.Env.ID, store.EnvironmentUpdate{Sync: &on})
	must(t, err)
	web, job := swarmtest.Image(t, "web"), swarmtest.Image(t, "job")
	g := pipelinetest.NewGitRepo(t)
	g.Write("slipway.toml", []byte(pipelinetest.WebManifest(b.App.Name, web, job, `MARK = "main-1"`)), 0o644)
	g.Commit("first")
	b.Bootstrap(t, g.URL(), "main")
	pipelinetest.ExpectState(t, b.DeployCurrent(t, b.Env), store.StateSucceeded)

	g.Write("slipway.toml", []byte(pipelinetest.WebManifest(b.App.Name, web, job, `MARK = "main-2"`)), 0o644)
	second := g.Commit("second")
	var mu sync.Mutex
	var enqueued []jobs.DeployArgs
	requests := func() []jobs.DeployArgs {
		mu.Lock()
		defer mu.Unlock()
		return append([]jobs.DeployArgs(nil), enqueued...)
	}
	now := time.Now()
	worker := &jobs.SyncWorker{
		Store: b.Store, Lister: &build.Lister{}, AllowFileURLs: true,
		Now: func() time.Time { return now },
		Enqueue: func(_ context.Context, _ *store.Store, args river.JobArgs) error {
			mu.Lock()
			defer mu.Unlock()
			enqueued = append(enqueued, args.(jobs.DeployArgs))
			return nil
		},
	}
	must(t, worker.Work(ctx, &river.Job[jobs.SyncPollArgs]{}))
	must(t, worker.Work(ctx, &river.Job[jobs.SyncPollArgs]{}))
	if got := requests(); len(got) != 1 {
		t.Fatalf("sync requested %d deployments, want exactly 1: %+v", len(got), got)
	}
	now = now.Add(2 * time.Minute) // due again; the head is already requested
	must(t, worker.Work(ctx, &river.Job[jobs.SyncPollArgs]{}))
	if got := requests(); len(got) != 1 {
		t.Fatalf("after the interval sync requested %d deployments, want still 1", len(got))
	}
	synced, err := b.Store.GetDeployment(ctx, b.Team.ID, requests()[0].DeploymentID)
	must(t, err)
	if synced.EnvironmentID != b.Env.ID || synced.Actor != "sync:poll" {
		t.Errorf("synced deployment env %s actor %q, want production by sync:poll", synced.EnvironmentID, synced.Actor)
	}
	synced = b.Advance(t, synced.ID)
	pipelinetest.ExpectState(t, synced, store.StateSucceeded)
	if f, err := b.Store.GetDeploymentFetch(ctx, b.Team.ID, synced.ID); err != nil || f.Commit != second {
		t.Errorf("synced fetch %+v (%v), want commit %s", f, err, second)
	}
	now = now.Add(2 * time.Minute)
	must(t, worker.Work(ctx, &river.Job[jobs.SyncPollArgs]{}))
	if got := requests(); len(got) != 1 {
		t.Fatalf("a deployed head was requested again: %d requests", len(got))
	}
}
