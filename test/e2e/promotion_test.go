package e2e

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/client"
	"github.com/riverqueue/river"

	appservice "github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/metrics"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/runtime/image"
	slwswarm "github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// engineImages answers the promotion's image check from the engine.
type engineImages struct{ cli *client.Client }

func (e engineImages) ImagePresent(ctx context.Context, ref string) (bool, error) {
	_, err := e.cli.ImageInspect(ctx, ref)
	if cerrdefs.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// TestPromotion_ProductionRunsStagingsImage deploys staging through the
// real pipeline on Swarm, promotes it to production through the service
// layer, and checks production runs the very image staging prepared,
// without preparing anything itself.
func TestPromotion_ProductionRunsStagingsImage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.NewSchema(t)
	cli := swarmtest.Client(t)
	driver := slwswarm.NewDriver(cli, nil)
	id := swarmtest.ID()
	team, err := st.CreateTeam(ctx, "Promotion "+id, "promotion-"+id)
	if err != nil {
		t.Fatal(err)
	}
	actor := appservice.Actor{TeamID: team.ID, UserID: "usr_e2e"}
	var queued []jobs.DeployArgs
	enqueue := func(_ context.Context, _ *store.Store, args river.JobArgs) error {
		queued = append(queued, args.(jobs.DeployArgs))
		return nil
	}
	web := swarmtest.Image(t, "web")
	doc := fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = "promo-%s"

[[spec.services]]
name = "web"
[spec.services.source]
type = "image"
image = %q
[spec.services.environment]
GREETING = "${{ vars.greeting }}"

[spec.environments.staging.variables]
greeting = "hello from staging"
[spec.environments.production]
promote_from = "staging"
[spec.environments.production.variables]
greeting = "hello from production"
`, id, web)
	applied, err := appservice.ApplyManifest(ctx, st, actor, enqueue, []byte(doc), appservice.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	envs := map[string]store.Environment{}
	for _, name := range []string{"staging", "production"} {
		env, err := st.GetEnvironmentByName(ctx, team.ID, applied.Application.ID, name)
		if err != nil {
			t.Fatal(err)
		}
		envs[name] = env
		swarmtest.RemoveOnCleanup(t, slwswarm.LabelEnv+"="+env.ID)
	}
	p := &pipeline.Pipeline{
		Store: st, Driver: driver, Images: image.NewResolver(cli, false),
		ConvergenceTimeout: 90 * time.Second, Metrics: metrics.New(nil), Queue: jobs.Queue{Enqueue: enqueue},
	}
	advance := func(id string) store.Deployment {
		t.Helper()
		ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		if err := p.Advance(ctx, team.ID, id); err != nil {
			t.Fatalf("advance %s: %v", id, err)
		}
		d, err := st.GetDeployment(ctx, team.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.State != store.StateSucceeded {
			t.Fatalf("deployment %s (%s) is %s: %s %s", d.ID, d.Origin, d.State, d.ErrorCode, d.ErrorMessage)
		}
		return d
	}

	// Production only receives promotions.
	if _, err := appservice.RequestDeployment(ctx, st, actor, enqueue, applied.Application.ID, "production"); !hasCode(err, "environment_promoted") {
		t.Fatalf("deploying production: %v, want environment_promoted", err)
	}
	requested, err := appservice.RequestDeployment(ctx, st, actor, enqueue, applied.Application.ID, "staging")
	if err != nil {
		t.Fatal(err)
	}
	staging := advance(requested.ID)

	opts := appservice.PromoteOptions{Images: engineImages{cli}}
	plan := opts
	plan.Plan = true
	planned, err := appservice.PromoteEnvironment(ctx, st, actor, enqueue, applied.Application.ID, "production", plan)
	if err != nil {
		t.Fatal(err)
	}
	if len(planned.Plan.Problems) != 0 || len(planned.Plan.Images) != 1 || planned.Plan.Images[0].Present == nil || !*planned.Plan.Images[0].Present {
		t.Fatalf("plan = %+v", planned.Plan)
	}
	opts.DeploymentID = staging.ID
	promoted, err := appservice.PromoteEnvironment(ctx, st, actor, enqueue, applied.Application.ID, "production", opts)
	if err != nil {
		t.Fatal(err)
	}
	prod := advance(promoted.Deployment.ID)

	stagingSteps, _ := pipeline.ParseProgress(staging.Steps)
	prodSteps, _ := pipeline.ParseProgress(prod.Steps)
	want := stagingSteps.Find("prepare").Detail["id:web"]
	prep := prodSteps.Find("prepare")
	if want == "" || prep == nil || prep.Detail["id:web"] != want {
		t.Fatalf("production prepared %+v, staging prepared image %q", prep, want)
	}
	// The adopted step keeps staging's timestamps: production prepared
	// (resolved, pulled or built) nothing of its own.
	if !prep.StartedAt.Equal(stagingSteps.Find("prepare").StartedAt) {
		t.Fatalf("production ran its own prepare step at %v (staging's ran at %v)", prep.StartedAt, stagingSteps.Find("prepare").StartedAt)
	}
	if got := runningImage(t, cli, envs["production"].ID); got != want {
		t.Fatalf("production's web container runs image %s, staging prepared %s", got, want)
	}
	rels, err := st.ListReleases(ctx, team.ID, applied.Application.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rels) != 1 || rels[0].ID != staging.ID || len(rels[0].Receivers) != 1 || rels[0].Receivers[0].DeploymentID != prod.ID {
		t.Fatalf("releases = %+v", rels)
	}
}

func hasCode(err error, code string) bool {
	var ie *appservice.InputError
	return errors.As(err, &ie) && ie.Code == code
}

// runningImage is the image ID of the environment's running web container,
// as the engine reports it (docker service inspect, then the task's
// container).
func runningImage(t *testing.T, cli *client.Client, envID string) string {
	t.Helper()
	svc, running := runningContainers(t, cli, envID, "web")
	if len(running) == 0 {
		t.Fatalf("production web (%s, image %s) has no running task", svc.Spec.Name, svc.Spec.TaskTemplate.ContainerSpec.Image)
	}
	return running[0].Image
}
