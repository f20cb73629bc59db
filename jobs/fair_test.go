package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/pipeline/pipelinetest"
	"github.com/slipwayhq/slipway/quota"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/test/summary"
)

// TestDeployQueue_FairAcrossTeams: on a real River client with two deploy
// workers and the real Swarm, team A queues a burst of five deployments
// (its concurrent_deployments quota is 1), then team B queues one. A's
// jobs beyond its quota yield their worker, so B's deployment starts while
// at least three of A's are still waiting, and succeeds, and A never runs
// two at once. Without the quota the queue is first come, first served,
// and B starts after A's fifth.
func TestDeployQueue_FairAcrossTeams(t *testing.T) {
	t.Parallel()
	a := pipelinetest.Setup(t, "production")
	ctx := context.Background()
	st := a.Store
	image := swarmtest.Image(t, "web")
	teamB, err := st.CreateTeam(ctx, "Team B "+swarmtest.ID(), "team-b-"+swarmtest.ID())
	must(t, err)
	swarmtest.RemoveOnCleanup(t, swarm.LabelTeam+"="+teamB.ID)
	must(t, st.SetTeamQuotas(ctx, a.Team.ID, quota.Row(map[quota.Name]int64{quota.ConcurrentDeployments: 1})))

	doc := func(name string) string {
		return fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q
[[spec.services]]
name = "web"
[spec.services.source]
type = "image"
image = %q
`, name, image)
	}
	request := func(team store.Team, name string) store.Deployment {
		app, err := st.CreateApplication(ctx, team.ID, name)
		must(t, err)
		env, err := st.CreateEnvironment(ctx, team.ID, store.EnvironmentParams{ApplicationID: app.ID, Kind: store.KindEnvironment, Name: "production", Slug: name})
		must(t, err)
		m, err := manifest.Decode([]byte(doc(name)), "toml")
		must(t, err)
		raw, err := json.Marshal(m)
		must(t, err)
		rev, err := st.CreateManifestRevision(ctx, team.ID, app.ID, store.RevisionParams{Manifest: raw, Source: doc(name), Author: "test"})
		must(t, err)
		d, err := st.CreateDeployment(ctx, team.ID, store.DeploymentParams{EnvironmentID: env.ID, Revision: rev.Revision, Origin: store.OriginBuild, Actor: "test"})
		must(t, err)
		return d
	}
	var burst []store.Deployment
	for i := range 5 {
		burst = append(burst, request(a.Team, fmt.Sprintf("a%d", i)))
	}
	bDep := request(teamB, "b0")

	workers := river.NewWorkers()
	must(t, jobs.Register(workers, jobs.Deps{Store: st, Logger: slog.New(slog.DiscardHandler), Pipeline: a.Pipeline}))
	client, err := jobs.NewClient(st.Pool(), workers, jobs.Config{Work: true, DeployConcurrency: 2, Logger: slog.New(slog.DiscardHandler)})
	must(t, err)
	// A's burst is queued first, B's after it.
	for _, d := range burst {
		_, err := client.Insert(ctx, jobs.DeployArgs{TeamID: a.Team.ID, DeploymentID: d.ID}, nil)
		must(t, err)
	}
	_, err = client.Insert(ctx, jobs.DeployArgs{TeamID: teamB.ID, DeploymentID: bDep.ID}, nil)
	must(t, err)
	must(t, client.Start(ctx))
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = client.Stop(stop)
	})

	// Watch how many of A's deployments hold a slot at once, until B's
	// deployment is over.
	deadline := time.Now().Add(4 * time.Minute)
	maxA := int64(0)
	var b store.Deployment
	for {
		c, err := st.CountQuotaUse(ctx, a.Team.ID)
		must(t, err)
		maxA = max(maxA, c.Deployments)
		b, err = st.GetDeployment(ctx, teamB.ID, bDep.ID)
		must(t, err)
		if b.State.Terminal() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("team B's deployment is still %s after 4 minutes", b.State)
		}
		time.Sleep(200 * time.Millisecond)
	}
	pipelinetest.ExpectState(t, b, store.StateSucceeded)
	var waiting int
	var starts []string
	for _, d := range burst {
		got, err := st.GetDeployment(ctx, a.Team.ID, d.ID)
		must(t, err)
		if got.StartedAt == nil || got.StartedAt.After(*b.StartedAt) {
			waiting++
			continue
		}
		starts = append(starts, got.StartedAt.Format("15:04:05.000"))
	}
	if waiting < 3 {
		t.Fatalf("team B's deployment started at %s, after %d of team A's burst (started %v): one team's burst held the workers",
			b.StartedAt.Format("15:04:05.000"), len(starts), starts)
	}
	if maxA > 1 {
		t.Fatalf("team A held %d deployment slots at once; its quota is 1", maxA)
	}
	summary.Line(t, "quotas: team B's deployment started with %d of team A's burst of 5 still queued (A held at most %d slot, its concurrent_deployments)", waiting, maxA)
}
