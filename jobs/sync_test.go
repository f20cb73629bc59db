package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/runtime/build"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// syncFixture drives the sync worker against a real database with a
// scripted branch listing and clock (no repository, no Swarm: sync only
// decides which deployments to request).
type syncFixture struct {
	t      *testing.T
	st     *store.Store
	team   store.Team
	worker *jobs.SyncWorker
	now    time.Time

	mu       sync.Mutex
	heads    map[string]string
	listErr  error
	listings int
	enqueued []jobs.DeployArgs
}

const syncURL = "https://git.example.com/acme/app.git"

func newSyncFixture(t *testing.T) *syncFixture {
	t.Helper()
	f := &syncFixture{t: t, st: storetest.NewSchema(t), now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	id := swarmtest.ID()
	var err error
	f.team, err = f.st.CreateTeam(context.Background(), "Team "+id, "team-"+id)
	must(t, err)
	clock := func() time.Time { return f.now }
	f.worker = &jobs.SyncWorker{
		Store: f.st,
		Now:   clock,
		Lister: &build.Lister{Now: clock, ListFunc: func(context.Context, string, build.Auth) (map[string]string, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.listings++
			if f.listErr != nil {
				return nil, f.listErr
			}
			out := map[string]string{}
			for k, v := range f.heads {
				out[k] = v
			}
			return out, nil
		}},
		Enqueue: func(_ context.Context, _ *store.Store, args river.JobArgs) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.enqueued = append(f.enqueued, args.(jobs.DeployArgs))
			return nil
		},
	}
	return f
}

// app creates a repository-backed application reading syncURL with one
// environment that deploys on push.
func (f *syncFixture) app(name string) (store.Application, store.Environment) {
	f.t.Helper()
	ctx := context.Background()
	a, err := f.st.CreateApplication(ctx, f.team.ID, name)
	must(f.t, err)
	toml := fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q
[spec.manifest]
path = "slipway.toml"
repository = { url = %q, branch = "main" }
sync = { mode = "poll", interval_seconds = 60 }
`, name, syncURL)
	m, err := manifest.Decode([]byte(toml), "toml")
	must(f.t, err)
	raw, err := json.Marshal(m)
	must(f.t, err)
	_, err = f.st.CreateManifestRevision(ctx, f.team.ID, a.ID, store.RevisionParams{Manifest: raw, Source: toml, Author: "test"})
	must(f.t, err)
	env, err := f.st.CreateEnvironment(ctx, f.team.ID, store.EnvironmentParams{
		ApplicationID: a.ID, Kind: store.KindEnvironment, Name: "production", Slug: "production", Sync: true,
	})
	must(f.t, err)
	return a, env
}

// finished records a finished deployment of env that fetched commit ("" for
// one that failed before fetching).
func (f *syncFixture) finished(env store.Environment, commit string) {
	f.t.Helper()
	ctx := context.Background()
	d, err := f.st.CreateDeployment(ctx, f.team.ID, store.DeploymentParams{EnvironmentID: env.ID, Revision: 1, Origin: store.OriginBuild, Actor: "test"})
	must(f.t, err)
	if commit != "" {
		_, err = f.st.RecordDeploymentFetch(ctx, f.team.ID, store.DeploymentFetch{
			DeploymentID: d.ID, RepositoryURL: syncURL, Branch: "main", Commit: commit, ManifestPath: "slipway.toml", Manifest: []byte("x"),
		}, nil)
		must(f.t, err)
	}
	_, err = f.st.FailDeployment(ctx, f.team.ID, d.ID, "test", "finished by the test")
	must(f.t, err)
}

// poll advances the clock past every interval and runs one pass.
func (f *syncFixture) poll(step time.Duration) {
	f.t.Helper()
	f.now = f.now.Add(step)
	must(f.t, f.worker.Work(context.Background(), &river.Job[jobs.SyncPollArgs]{}))
}

func (f *syncFixture) expectRequests(n int, why string) {
	f.t.Helper()
	if len(f.enqueued) != n {
		f.t.Fatalf("%s: %d deployments requested, want %d", why, len(f.enqueued), n)
	}
}

func sha(c byte) string {
	b := make([]byte, 40)
	for i := range b {
		b[i] = c
	}
	return string(b)
}

func TestSync_FollowsTheSpecRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSyncFixture(t)
	_, env := f.app("web")
	_, other := f.app("api") // a second application reading the same repository
	f.heads = map[string]string{"main": sha('a')}

	f.poll(0)
	f.expectRequests(0, "nothing follows before its first deployment")
	if f.listings != 1 {
		t.Errorf("two applications reading one repository made %d listings, want 1", f.listings)
	}
	f.finished(env, sha('a'))
	f.finished(other, sha('a'))
	f.poll(2 * time.Minute)
	f.expectRequests(0, "the head its last deployment fetched")

	// A push while a deployment is live coalesces into one request after it.
	f.heads["main"] = sha('b')
	live, err := f.st.CreateDeployment(ctx, f.team.ID, store.DeploymentParams{EnvironmentID: env.ID, Revision: 1, Origin: store.OriginBuild, Actor: "test"})
	must(t, err)
	f.poll(2 * time.Minute)
	f.expectRequests(1, "only the other application while web deploys")
	_, err = f.st.FailDeployment(ctx, f.team.ID, live.ID, "test", "done")
	must(t, err)
	f.poll(10 * time.Second)
	f.expectRequests(1, "not due before the interval")
	f.poll(2 * time.Minute)
	f.expectRequests(2, "web's head after its deployment finished")
	req, err := f.st.GetDeployment(ctx, f.team.ID, f.enqueued[1].DeploymentID)
	must(t, err)
	if req.Actor != "sync:poll" || req.Origin != store.OriginBuild {
		t.Errorf("requested deployment by %q origin %s, want sync:poll build", req.Actor, req.Origin)
	}
	if ref, err := f.st.GetDeploymentRef(ctx, f.team.ID, req.ID); err != nil || ref.Commit != sha('b') {
		t.Errorf("requested deployment reads %+v (%v), want the listed head %s", ref, err, sha('b'))
	}

	// Each head deploys once; a failed head waits for the branch to move.
	must(t, f.st.WithTx(ctx, func(tx *store.Store) error {
		for _, a := range f.enqueued {
			if _, err := tx.FailDeployment(ctx, f.team.ID, a.DeploymentID, "manifest_not_found", "failed"); err != nil {
				return err
			}
		}
		return nil
	}))
	f.poll(2 * time.Minute)
	f.expectRequests(2, "failed heads are not retried")
	f.heads["main"] = sha('c')
	f.poll(2 * time.Minute)
	f.expectRequests(4, "the branch moved past the failed head")

	// A gone branch deploys nothing.
	delete(f.heads, "main")
	f.heads["other"] = sha('d')
	f.poll(2 * time.Minute)
	f.expectRequests(4, "the branch is gone")
}

func TestSync_ListingFailuresBackOff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSyncFixture(t)
	a, _ := f.app("web")
	f.listErr = errors.New("connection refused")
	want := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute}
	for i, backoff := range want {
		f.poll(0)
		st, err := f.st.GetRepositoryState(ctx, f.team.ID, a.ID)
		must(t, err)
		if st.Failures != i+1 || st.LastError == "" || st.NextCheckAt == nil || !st.NextCheckAt.Equal(f.now.Add(backoff)) {
			t.Fatalf("after failure %d: %+v, want next check in %s", i+1, st, backoff)
		}
		before := f.listings
		f.poll(backoff - time.Second)
		if f.listings != before {
			t.Fatalf("listed again %s into a %s backoff", backoff-time.Second, backoff)
		}
		f.now = f.now.Add(time.Second)
	}
	f.listErr = nil
	f.heads = map[string]string{"main": sha('a')}
	f.poll(0)
	st, err := f.st.GetRepositoryState(ctx, f.team.ID, a.ID)
	must(t, err)
	if st.Failures != 0 || st.LastError != "" || st.LastCheckedAt == nil {
		t.Errorf("after a good listing: %+v, want failures and error cleared", st)
	}
	// Backoff is capped at an hour.
	f.listErr = errors.New("still down")
	for range 10 {
		f.poll(2 * time.Hour)
	}
	st, err = f.st.GetRepositoryState(ctx, f.team.ID, a.ID)
	must(t, err)
	if got := st.NextCheckAt.Sub(f.now); got != time.Hour {
		t.Errorf("after %d failures the next check is in %s, want 1h", st.Failures, got)
	}
}
