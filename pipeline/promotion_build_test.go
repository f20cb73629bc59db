package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/pipeline/pipelinetest"
	"github.com/slipwayhq/slipway/runtime/build"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
)

// buildArgManifest builds web from the repository at url with the build
// argument ORIGIN rendered from each environment's variable origin.
func buildArgManifest(app, url, staging, production string) string {
	return fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[[spec.services]]
name = "web"
[spec.services.source]
type = "git"
repository = { url = %q, branch = "main" }
[spec.services.source.build]
type = "docker"
args = { ORIGIN = "${{ vars.origin }}" }
[spec.services.healthcheck]
type = "http"
port = 8080
path = "/health"
interval_seconds = 2
timeout_seconds = 2
start_period_seconds = 30
retries = 5

[spec.environments.staging.variables]
origin = %q
[spec.environments.production]
promote_from = "staging"
[spec.environments.production.variables]
origin = %q
`, app, url, staging, production)
}

// TestPipeline_PromotionBuildArgumentFromVariable builds staging for real
// from a repository whose Dockerfile bakes the build argument ORIGIN into
// the image. While ORIGIN renders the same in both environments,
// production receives staging's image without building; once production's
// variable differs, the promotion is refused with release_incompatible,
// both by the service before anything is saved and by the pipeline before
// capture, and production keeps running what it ran.
func TestPipeline_PromotionBuildArgumentFromVariable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, installation := setupBuilds(t, "staging")
	cli := swarmtest.Client(t)
	g := pipelinetest.NewGitRepo(t)
	g.Write("bin/app", staticWebBinary(t), 0o755)
	g.Write("Dockerfile", []byte("FROM scratch\nARG ORIGIN\nCOPY bin/app /app\nLABEL dev.slipway.test.origin=$ORIGIN\nENTRYPOINT [\"/app\"]\n"), 0o644)
	g.Commit("web")
	prodEnv := b.AddEnvironment(t, "production")
	actor := service.Actor{TeamID: b.Team.ID, UserID: "test"}
	// The promotion is advanced by hand; its deploy job is not inserted.
	queueNothing := func(context.Context, *store.Store, river.JobArgs) error { return nil }
	promote := func() (service.PromotionResult, error) {
		return service.PromoteEnvironment(ctx, b.Store, actor, queueNothing, b.App.ID, "production", service.PromoteOptions{})
	}
	builtImages := func() int {
		t.Helper()
		list, err := cli.ImageList(ctx, image.ListOptions{Filters: filters.NewArgs(filters.Arg("label", build.LabelInstallation+"="+installation))})
		must(t, err)
		return len(list)
	}
	prodWeb := func() (image string, index uint64, deployment string) {
		t.Helper()
		list := b.ServicesOf(t, prodEnv.ID)
		if len(list) != 1 {
			t.Fatalf("production has %d services, want web alone", len(list))
		}
		s := list[0]
		return s.Spec.TaskTemplate.ContainerSpec.Image, s.Version.Index, s.Spec.Labels[swarm.LabelDeployment]
	}

	// The same origin in both environments: the release is compatible.
	same := "https://notes.example"
	staging := b.Deploy(t, buildArgManifest(b.App.Name, g.URL(), same, same))
	pipelinetest.ExpectState(t, staging, store.StateSucceeded)
	stagingPrep := prepareStep(t, staging)
	built := stagingPrep.Detail["id:web"]
	img, err := cli.ImageInspect(ctx, built)
	must(t, err)
	if got := img.Config.Labels["dev.slipway.test.origin"]; got != same {
		t.Fatalf("staging's image was built with ORIGIN %q, want %q", got, same)
	}
	imagesBefore := builtImages()

	res, err := promote()
	must(t, err)
	prod := b.Advance(t, res.Deployment.ID)
	pipelinetest.ExpectState(t, prod, store.StateSucceeded)
	prodPrep := prepareStep(t, prod)
	if prodPrep.Detail["id:web"] != built || !prodPrep.StartedAt.Equal(stagingPrep.StartedAt) {
		t.Fatalf("production prepared %+v; want staging's adopted prepare step with image %s", prodPrep, built)
	}
	if n := builtImages(); n != imagesBefore {
		t.Fatalf("the promotion built images: %d before, %d after", imagesBefore, n)
	}
	runImage, runIndex, runDeployment := prodWeb()
	if runImage != built || runDeployment != prod.ID {
		t.Fatalf("production web runs %s from deployment %s, want staging's image %s from %s", runImage, runDeployment, built, prod.ID)
	}

	// Production's origin now differs: the build argument staging's image
	// was built with is wrong for production.
	staging2 := b.Deploy(t, buildArgManifest(b.App.Name, g.URL(), same, "https://prod.notes.example"))
	pipelinetest.ExpectState(t, staging2, store.StateSucceeded)
	prodDeployments := func() int {
		t.Helper()
		list, err := b.Store.ListDeployments(ctx, b.Team.ID, store.DeploymentFilter{EnvironmentID: prodEnv.ID})
		must(t, err)
		return len(list)
	}
	before := prodDeployments()
	_, err = promote()
	var ie *service.InputError
	if !errors.As(err, &ie) || ie.Code != "release_incompatible" || !strings.Contains(ie.Message, "services.web.build.args.ORIGIN") {
		t.Fatalf("promotion: %v, want release_incompatible naming services.web.build.args.ORIGIN", err)
	}
	if n := prodDeployments(); n != before {
		t.Fatalf("the refused promotion saved a deployment: %d, want %d", n, before)
	}

	// A promotion requested regardless (the pipeline's own guard) fails
	// before capturing anything.
	refused := b.Promote(t, prodEnv, staging2)
	pipelinetest.ExpectState(t, refused, store.StateFailed)
	if refused.ErrorCode != "release_incompatible" || !strings.Contains(refused.ErrorMessage, "services.web.build.args.ORIGIN") {
		t.Fatalf("error %s: %s, want release_incompatible naming services.web.build.args.ORIGIN", refused.ErrorCode, refused.ErrorMessage)
	}
	if refused.CapturedManifest != nil || refused.RenderedManifest != nil {
		t.Fatal("the refused promotion captured a manifest")
	}
	if p, _ := pipeline.ParseProgress(refused.Steps); p.Find("prepare") != nil {
		t.Fatalf("the refused promotion prepared images: %s", refused.Steps)
	}
	if img, index, dep := prodWeb(); img != runImage || index != runIndex || dep != runDeployment {
		t.Fatalf("production web changed to %s (version %d, deployment %s), want %s (version %d, deployment %s)",
			img, index, dep, runImage, runIndex, runDeployment)
	}
	current, err := b.Store.LatestSucceededDeployment(ctx, b.Team.ID, prodEnv.ID)
	must(t, err)
	if current.ID != prod.ID {
		t.Fatalf("production's current deployment is %s, want %s", current.ID, prod.ID)
	}
}

// prepareStep is d's prepare step, which must exist.
func prepareStep(t *testing.T, d store.Deployment) pipeline.Step {
	t.Helper()
	p, err := pipeline.ParseProgress(d.Steps)
	must(t, err)
	s := p.Find("prepare")
	if s == nil {
		t.Fatalf("deployment %s has no prepare step: %s", d.ID, d.Steps)
	}
	return *s
}
