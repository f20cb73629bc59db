package deploy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	dockerswarm "github.com/docker/docker/api/types/swarm"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/runtime/image"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

const manifestTemplate = `
api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[[spec.services]]
name = "web"
replicas = 3
[spec.services.source]
type = "image"
image = %q
[spec.services.healthcheck]
type = "http"
port = 8080
interval_seconds = 2
timeout_seconds = 2
start_period_seconds = 30
retries = 5
`

// round deploys a fresh environment through the pipeline, then creates the
// same desired service by hand in another environment, and returns both
// durations until every replica runs and passes its health check.
func round(tb testing.TB, st *store.Store, p *pipeline.Pipeline, teamID string, n int) (pipeline, raw time.Duration) {
	ctx := context.Background()
	cli := swarmtest.Client(tb)
	web := swarmtest.Image(tb, "web")
	id := swarmtest.ID()
	app, err := st.CreateApplication(ctx, teamID, fmt.Sprintf("bench-%s-%d", id, n))
	check(tb, err)
	env, err := st.CreateEnvironment(ctx, teamID, store.EnvironmentParams{ApplicationID: app.ID, Kind: store.KindEnvironment, Name: "production", Slug: "production"})
	check(tb, err)
	m, err := manifest.Decode([]byte(fmt.Sprintf(manifestTemplate, app.Name, web)), "toml")
	check(tb, err)
	raw1, _ := json.Marshal(m)
	rev, err := st.CreateManifestRevision(ctx, teamID, app.ID, store.RevisionParams{Manifest: raw1, Source: "bench"})
	check(tb, err)
	driver := swarm.NewDriver(cli, nil)
	ref := swarm.EnvRef{ID: env.ID, ShortID: store.ShortID(env.ID)}
	tb.Cleanup(func() { _, _ = driver.RemoveEnvironment(context.Background(), ref) })

	// (a) the pipeline, from request to succeeded.
	d, err := st.CreateDeployment(ctx, teamID, store.DeploymentParams{EnvironmentID: env.ID, Revision: rev.Revision, Origin: store.OriginBuild})
	check(tb, err)
	start := time.Now()
	check(tb, p.Advance(ctx, teamID, d.ID))
	pipeline = time.Since(start)
	d, err = st.GetDeployment(ctx, teamID, d.ID)
	check(tb, err)
	if d.State != store.StateSucceeded {
		tb.Fatalf("pipeline deployment %s: %s", d.State, d.ErrorMessage)
	}

	// (b) the equivalent spec created by hand in a second environment, its
	// network and probe config made beforehand and not timed.
	rawEnv := swarm.EnvRef{ID: "bench-raw-" + id + fmt.Sprint(n), ShortID: "braw" + id + fmt.Sprint(n)}
	tb.Cleanup(func() { _, _ = driver.RemoveEnvironment(context.Background(), rawEnv) })
	rendered := *m
	manifest.ApplyDefaults(&rendered)
	desired, err := swarm.Desired(swarm.DesiredInput{Manifest: &rendered, TeamID: teamID, AppID: app.ID, EnvID: rawEnv.ID, EnvShortID: rawEnv.ShortID, DeploymentID: "raw", Images: map[string]string{"web": web}})
	check(tb, err)
	check(tb, driver.EnsureNetworks(ctx, desired))
	check(tb, driver.EnsureConfigs(ctx, desired))
	spec := desired.Services[0].Spec
	// Resolve config and network names to ids as the driver would.
	configs, err := cli.ConfigList(ctx, dockerswarm.ConfigListOptions{Filters: filters.NewArgs(filters.Arg("label", swarm.LabelEnv+"="+rawEnv.ID))})
	check(tb, err)
	for _, ref := range spec.TaskTemplate.ContainerSpec.Configs {
		for _, c := range configs {
			if c.Spec.Name == ref.ConfigName {
				ref.ConfigID = c.ID
			}
		}
	}
	start = time.Now()
	resp, err := cli.ServiceCreate(ctx, spec, dockerswarm.ServiceCreateOptions{})
	check(tb, err)
	for {
		tasks, err := cli.TaskList(ctx, dockerswarm.TaskListOptions{Filters: filters.NewArgs(filters.Arg("service", resp.ID), filters.Arg("desired-state", "running"))})
		check(tb, err)
		running := 0
		for _, t := range tasks {
			if t.Status.State == dockerswarm.TaskStateRunning {
				running++
			}
		}
		if running == 3 {
			break
		}
		if time.Since(start) > 3*time.Minute {
			tb.Fatal("the raw service did not converge in 3 minutes")
		}
		time.Sleep(100 * time.Millisecond)
	}
	raw = time.Since(start)
	check(tb, cli.ServiceRemove(ctx, resp.ID))
	return pipeline, raw
}

func run(tb testing.TB, rounds int) {
	st := storetest.NewSchema(tb)
	cli := swarmtest.Client(tb)
	team, err := st.CreateTeam(context.Background(), "Bench", "bench-"+swarmtest.ID())
	check(tb, err)
	p := &pipeline.Pipeline{Store: st, Driver: swarm.NewDriver(cli, nil), Images: image.NewResolver(cli, false)}
	var as, bs []time.Duration
	for i := range rounds {
		a, b := round(tb, st, p, team.ID, i)
		as, bs = append(as, a), append(bs, b)
	}
	ma, mb := median(as), median(bs)
	fmt.Printf("bench/deploy: %d rounds, 3 replicas with an HTTP health check\n", rounds)
	fmt.Printf("  (a) slipway pipeline, request to succeeded: median %s\n", ma.Round(time.Millisecond))
	fmt.Printf("  (b) docker service create until 3 tasks healthy: median %s\n", mb.Round(time.Millisecond))
	fmt.Printf("  ratio a/b: %.2f (target <= 1.15)\n", float64(ma)/float64(mb))
	fmt.Println("  Docker API calls per reconcile scan: see BenchmarkObserve in runtime/swarm (docker-calls/scan)")
}

// TestDeployOverhead is the short form `make test` runs.
func TestDeployOverhead(t *testing.T) {
	t.Parallel()
	run(t, 1)
}

// BenchmarkDeployOverhead is the full form: five rounds, medians.
func BenchmarkDeployOverhead(b *testing.B) {
	for range b.N {
		run(b, 5)
	}
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func check(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
