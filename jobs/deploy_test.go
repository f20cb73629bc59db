package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	dockerswarm "github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/api/types/volume"
	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/metrics"
	"github.com/slipwayhq/slipway/runtime/image"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// pipelineBundle is one application with one environment on a real
// database and the real Swarm.
type pipelineBundle struct {
	st       *store.Store
	pipeline *jobs.Pipeline
	driver   *swarm.Driver
	team     store.Team
	app      store.Application
	env      store.Environment

	mu       sync.Mutex
	enqueued []jobs.DeployArgs
}

func setupPipeline(t *testing.T, envName string) *pipelineBundle {
	t.Helper()
	ctx := context.Background()
	st := storetest.NewSchema(t)
	cli := swarmtest.Client(t)
	b := &pipelineBundle{st: st, driver: swarm.NewDriver(cli, nil)}
	var err error
	id := swarmtest.ID()
	b.team, err = st.CreateTeam(ctx, "Team "+id, "team-"+id)
	must(t, err)
	b.app, err = st.CreateApplication(ctx, b.team.ID, "app-"+id)
	must(t, err)
	b.env, err = st.CreateEnvironment(ctx, b.team.ID, store.EnvironmentParams{
		ApplicationID: b.app.ID, Kind: store.KindEnvironment, Name: envName, Slug: envName,
	})
	must(t, err)
	b.pipeline = &jobs.Pipeline{
		Store:              st,
		Driver:             b.driver,
		Images:             image.NewResolver(cli, false),
		ConvergenceTimeout: 150 * time.Second,
		Metrics:            metrics.New(nil),
		Enqueue: func(_ context.Context, _ *store.Store, args river.JobArgs) error {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.enqueued = append(b.enqueued, args.(jobs.DeployArgs))
			return nil
		},
	}
	// Every object the team's deployments make (any environment, preview
	// or link network) goes when the test ends; a test starting a River
	// client later stops it before this runs.
	swarmtest.RemoveOnCleanup(t, swarm.LabelTeam+"="+b.team.ID)
	return b
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// deploy saves the manifest as a new revision, requests a deployment and
// advances it to the end, as the worker would.
func (b *pipelineBundle) deploy(t *testing.T, toml string) store.Deployment {
	t.Helper()
	return b.deployTo(t, b.pipeline, b.app.ID, b.env.ID, toml)
}

// deployTo is deploy for any application and environment of the team,
// through pipeline.
func (b *pipelineBundle) deployTo(t *testing.T, pipeline *jobs.Pipeline, appID, envID, toml string) store.Deployment {
	t.Helper()
	return b.advanceWith(t, pipeline, b.requestDeployment(t, appID, envID, toml).ID)
}

// requestDeployment saves toml as the application's manifest and requests
// a deployment of it to envID, without running it.
func (b *pipelineBundle) requestDeployment(t *testing.T, appID, envID, toml string) store.Deployment {
	t.Helper()
	ctx := context.Background()
	m, err := manifest.Decode([]byte(toml), "toml")
	must(t, err)
	if errs := manifest.Validate(m, manifest.ValidateOptions{}); len(errs) > 0 {
		t.Fatalf("manifest invalid: %v", errs)
	}
	raw, err := json.Marshal(m)
	must(t, err)
	rev, err := b.st.CreateManifestRevision(ctx, b.team.ID, appID, store.RevisionParams{Manifest: raw, Source: toml, Author: "test"})
	must(t, err)
	d, err := b.st.CreateDeployment(ctx, b.team.ID, store.DeploymentParams{
		EnvironmentID: envID, Revision: rev.Revision, Origin: store.OriginBuild, Actor: "test",
	})
	must(t, err)
	return d
}

// advanceWith runs every remaining step of deployment id with pipeline.
func (b *pipelineBundle) advanceWith(t *testing.T, pipeline *jobs.Pipeline, id string) store.Deployment {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := pipeline.Advance(ctx, b.team.ID, id); err != nil {
		t.Fatalf("advance %s: %v", id, err)
	}
	d, err := b.st.GetDeployment(ctx, b.team.ID, id)
	must(t, err)
	return d
}

func (b *pipelineBundle) advance(t *testing.T, id string) store.Deployment {
	t.Helper()
	return b.advanceWith(t, b.pipeline, id)
}

func (b *pipelineBundle) services(t *testing.T) map[string]dockerswarm.Service {
	t.Helper()
	cli := swarmtest.Client(t)
	list, err := cli.ServiceList(context.Background(), dockerswarm.ServiceListOptions{
		Filters: filters.NewArgs(filters.Arg("label", swarm.LabelEnv+"="+b.env.ID)),
	})
	must(t, err)
	out := map[string]dockerswarm.Service{}
	for _, s := range list {
		if s.Spec.Labels[swarm.LabelJob] == "" {
			out[s.Spec.Labels[swarm.LabelService]] = s
		}
	}
	return out
}

func expectState(t *testing.T, d store.Deployment, want store.DeploymentState) {
	t.Helper()
	if d.State != want {
		t.Fatalf("deployment %s is %s (%s: %s), want %s\nsteps: %s", d.ID, d.State, d.ErrorCode, d.ErrorMessage, want, d.Steps)
	}
}

func webManifest(name, webImage, workerImage string, extra string) string {
	return fmt.Sprintf(`
api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[[spec.services]]
name = "web"
replicas = 2
[spec.services.source]
type = "image"
image = %q
[spec.services.environment]
VERSION = "one"
%s
[spec.services.healthcheck]
type = "http"
port = 8080
path = "/health"
interval_seconds = 1
timeout_seconds = 1
retries = 2
[spec.services.rollout]
monitor_seconds = 3

[[spec.services]]
name = "worker"
command = ["/app", "--sleep", "3600"]
[spec.services.source]
type = "image"
image = %q
`, name, webImage, extra, workerImage)
}

func TestPipeline_TwoServicesConverge(t *testing.T) {
	t.Parallel()
	b := setupPipeline(t, "production")
	web, job := swarmtest.Image(t, "web"), swarmtest.Image(t, "job")

	d := b.deploy(t, webManifest(b.app.Name, web, job, ""))
	expectState(t, d, store.StateSucceeded)

	svcs := b.services(t)
	if len(svcs) != 2 {
		t.Fatalf("want services web and worker, got %v", keys(svcs))
	}
	if r := *svcs["web"].Spec.Mode.Replicated.Replicas; r != 2 {
		t.Errorf("web replicas = %d, want 2", r)
	}
	progress, err := jobs.ParseProgress(d.Steps)
	must(t, err)
	for _, step := range []string{"capture", "prepare", "plan", "rollout:web", "rollout:worker", "cleanup"} {
		if !progress.Done(step) {
			t.Errorf("step %s not done: %+v", step, progress.Find(step))
		}
	}
	if d.RenderedManifest == nil || d.CapturedManifest == nil {
		t.Error("the deployment did not record its captured and rendered manifest")
	}

	// /metrics counts the deployment.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Authorization", "Bearer metrics-token")
	b.pipeline.Metrics.Handler("metrics-token").ServeHTTP(rec, req)
	if body := rec.Body.String(); rec.Code != http.StatusOK || !strings.Contains(body, `slipway_deployments_total{outcome="succeeded"} 1`) {
		t.Errorf("/metrics answered %d without the deployment counter:\n%.2000s", rec.Code, body)
	}
}

func TestPipeline_FailedHealthCheckRollsBackAutomatically(t *testing.T) {
	t.Parallel()
	b := setupPipeline(t, "production")
	web, job := swarmtest.Image(t, "web"), swarmtest.Image(t, "job")
	good := webManifest(b.app.Name, web, job, "") + `
[spec.environments.production]
rollback = "automatic"
`
	first := b.deploy(t, good)
	expectState(t, first, store.StateSucceeded)

	bad := strings.Replace(good, `VERSION = "one"`, `VERSION = "two"
HEALTHY = "false"`, 1)
	second := b.deploy(t, bad)
	expectState(t, second, store.StateFailed)
	if second.ErrorCode != swarm.CodeRolloutFailed && second.ErrorCode != swarm.CodeConvergenceTimeout {
		t.Fatalf("error code %q, want a rollout failure", second.ErrorCode)
	}

	if len(b.enqueued) != 1 {
		t.Fatalf("want one rollback deployment queued, got %v", b.enqueued)
	}
	rollback := b.advance(t, b.enqueued[0].DeploymentID)
	expectState(t, rollback, store.StateSucceeded)
	if rollback.Origin != store.OriginRollback || rollback.RestoredFrom != first.ID {
		t.Errorf("rollback origin %s restored from %s, want rollback of %s", rollback.Origin, rollback.RestoredFrom, first.ID)
	}
	env := b.services(t)["web"].Spec.TaskTemplate.ContainerSpec.Env
	if !contains(env, "VERSION=one") || contains(env, "HEALTHY=false") {
		t.Errorf("web runs %v after the rollback, want the first deployment's environment", env)
	}
}

func TestPipeline_JobRunsBeforeRolloutAfterDependencies(t *testing.T) {
	t.Parallel()
	b := setupPipeline(t, "production")
	web, job := swarmtest.Image(t, "web"), swarmtest.Image(t, "job")
	toml := fmt.Sprintf(`
api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[[spec.services]]
name = "db"
[spec.services.source]
type = "image"
image = %q
[spec.services.healthcheck]
type = "http"
port = 8080
interval_seconds = 1
timeout_seconds = 1

[[spec.services]]
name = "api"
depends_on = ["db"]
command = ["/app", "--sleep", "3600"]
[spec.services.source]
type = "image"
image = %q
[spec.services.environment]
MIGRATED_BY = "job"

[[spec.jobs]]
name = "migrate"
service = "api"
command = ["/app", "--env", "MIGRATED_BY", "--print", "migrated"]
`, b.app.Name, web, job)
	d := b.deploy(t, toml)
	expectState(t, d, store.StateSucceeded)
	progress, err := jobs.ParseProgress(d.Steps)
	must(t, err)
	// The job reuses the api's image and environment.
	if s := progress.Find("job:migrate"); s == nil || !strings.Contains(s.Output, "MIGRATED_BY=job") || !strings.Contains(s.Output, "migrated") {
		t.Errorf("job output %+v, want the service's environment and its own output", s)
	}
	order := map[string]int{}
	for i, s := range progress.Steps {
		order[s.Name] = i
	}
	if !(order["rollout:db"] < order["job:migrate"] && order["job:migrate"] < order["rollout:api"]) {
		t.Errorf("want db rolled out, then the job, then api; steps %v", stepNames(progress))
	}
}

func TestPipeline_FailedJobStopsBeforeRollout(t *testing.T) {
	t.Parallel()
	b := setupPipeline(t, "production")
	job := swarmtest.Image(t, "job")
	toml := fmt.Sprintf(`
api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[[spec.services]]
name = "api"
command = ["/app", "--sleep", "3600"]
[spec.services.source]
type = "image"
image = %q

[[spec.jobs]]
name = "migrate"
service = "api"
command = ["/app", "--print", "migration failed on purpose", "--exit", "3"]
`, b.app.Name, job)
	d := b.deploy(t, toml)
	expectState(t, d, store.StateFailed)
	if d.ErrorCode != swarm.CodeJobFailed {
		t.Errorf("error code %q, want job_failed", d.ErrorCode)
	}
	progress, _ := jobs.ParseProgress(d.Steps)
	if s := progress.Find("job:migrate"); s == nil || !strings.Contains(s.Output, "migration failed on purpose") {
		t.Errorf("job output not kept: %+v", s)
	}
	if _, ok := b.services(t)["api"]; ok {
		t.Error("api was rolled out although its job failed")
	}
}

func TestPipeline_EmptyApplicationRemovesServicesKeepsVolumes(t *testing.T) {
	t.Parallel()
	b := setupPipeline(t, "production")
	job := swarmtest.Image(t, "job")
	withVolume := volumeManifest(b.app.Name, job)
	expectState(t, b.deploy(t, withVolume), store.StateSucceeded)
	empty := fmt.Sprintf(`
api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q
`, b.app.Name)
	expectState(t, b.deploy(t, empty), store.StateSucceeded)
	if svcs := b.services(t); len(svcs) != 0 {
		t.Errorf("services left after deploying an empty application: %v", keys(svcs))
	}
	cli := swarmtest.Client(t)
	vols, err := cli.VolumeList(context.Background(), volume.ListOptions{
		Filters: filters.NewArgs(filters.Arg("label", swarm.LabelEnv+"="+b.env.ID)),
	})
	must(t, err)
	if len(vols.Volumes) != 1 {
		t.Errorf("want the data volume kept, got %d volumes", len(vols.Volumes))
	}
}

func TestPipeline_MissingImageFailsAndKeepsRunningDeployment(t *testing.T) {
	t.Parallel()
	b := setupPipeline(t, "production")
	web, job := swarmtest.Image(t, "web"), swarmtest.Image(t, "job")
	good := webManifest(b.app.Name, web, job, "")
	expectState(t, b.deploy(t, good), store.StateSucceeded)
	before := b.services(t)["web"].Version.Index

	bad := strings.Replace(good, web, "slipway-test/does-not-exist:1", 1)
	d := b.deploy(t, bad)
	expectState(t, d, store.StateFailed)
	if d.ErrorCode != image.CodeUnavailable {
		t.Errorf("error code %q, want %s", d.ErrorCode, image.CodeUnavailable)
	}
	if after := b.services(t)["web"].Version.Index; after != before {
		t.Errorf("the running web service changed (version %d -> %d) although preparation failed", before, after)
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func stepNames(p jobs.Progress) []string {
	out := make([]string, len(p.Steps))
	for i, s := range p.Steps {
		out[i] = s.Name
	}
	return out
}

func TestReconcile_RepairsManualScale(t *testing.T) {
	t.Parallel()
	b := setupPipeline(t, "production")
	web, job := swarmtest.Image(t, "web"), swarmtest.Image(t, "job")
	d := b.deploy(t, webManifest(b.app.Name, web, job, ""))
	expectState(t, d, store.StateSucceeded)

	ctx := context.Background()
	cli := swarmtest.Client(t)
	svc := b.services(t)["web"]
	one := uint64(1)
	svc.Spec.Mode.Replicated.Replicas = &one
	if _, err := cli.ServiceUpdate(ctx, svc.ID, svc.Version, svc.Spec, dockerswarm.ServiceUpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	w := &jobs.ReconcileWorker{Pipeline: b.pipeline}
	// The periodic scan finds the environment among every maintained one.
	if err := w.Work(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if r := *b.services(t)["web"].Spec.Mode.Replicated.Replicas; r != 2 {
		t.Fatalf("web has %d replicas after reconciliation, want 2", r)
	}
	repaired, err := w.Reconcile(ctx, b.team.ID, d.ID)
	must(t, err)
	if len(repaired) != 0 {
		t.Fatalf("a second reconciliation repaired %v: it should find nothing to do", repaired)
	}
	events, err := b.st.ListEvents(ctx, b.team.ID, store.EventFilter{ObjectType: "deployment", ObjectID: d.ID})
	must(t, err)
	found := false
	for _, e := range events {
		if e.Verb == "drift.repaired" && strings.Contains(string(e.Details), "replicas") {
			found = true
		}
	}
	if !found {
		t.Error("no drift.repaired event naming replicas was recorded")
	}
}

// promote requests a promotion of src into env and advances it.
func (b *pipelineBundle) promote(t *testing.T, env store.Environment, src store.Deployment) store.Deployment {
	t.Helper()
	d, err := b.st.CreateDeployment(context.Background(), b.team.ID, store.DeploymentParams{
		EnvironmentID: env.ID, Revision: src.Revision, Origin: store.OriginPromotion, PromotedFrom: src.ID, Actor: "test",
	})
	must(t, err)
	return b.advance(t, d.ID)
}

func (b *pipelineBundle) addEnvironment(t *testing.T, name string) store.Environment {
	t.Helper()
	env, err := b.st.CreateEnvironment(context.Background(), b.team.ID, store.EnvironmentParams{
		ApplicationID: b.app.ID, Kind: store.KindEnvironment, Name: name, Slug: name, PromoteFrom: b.env.ID,
	})
	must(t, err)
	return env // removed with the team's objects (setupPipeline)
}

func TestPipeline_PromotionRunsTheSameImage(t *testing.T) {
	t.Parallel()
	b := setupPipeline(t, "staging")
	web, job := swarmtest.Image(t, "web"), swarmtest.Image(t, "job")
	doc := webManifest(b.app.Name, web, job, `GREETING = "${{ vars.greeting }}"`) + `
[spec.environments.staging.variables]
greeting = "hello from staging"
[spec.environments.production]
promote_from = "staging"
[spec.environments.production.variables]
greeting = "hello from production"
`
	staging := b.deploy(t, doc)
	expectState(t, staging, store.StateSucceeded)
	prodEnv := b.addEnvironment(t, "production")

	prod := b.promote(t, prodEnv, staging)
	expectState(t, prod, store.StateSucceeded)

	stagingProgress, _ := jobs.ParseProgress(staging.Steps)
	prodProgress, _ := jobs.ParseProgress(prod.Steps)
	want := stagingProgress.Find("prepare").Detail["id:web"]
	if got := prodProgress.Find("prepare").Detail["id:web"]; got == "" || got != want {
		t.Fatalf("production runs image %q, staging ran %q: a promotion must run the same image", got, want)
	}
	cli := swarmtest.Client(t)
	list, err := cli.ServiceList(context.Background(), dockerswarm.ServiceListOptions{
		Filters: filters.NewArgs(filters.Arg("label", swarm.LabelEnv+"="+prodEnv.ID), filters.Arg("label", swarm.LabelService+"=web")),
	})
	must(t, err)
	if len(list) != 1 || !contains(list[0].Spec.TaskTemplate.ContainerSpec.Env, "GREETING=hello from production") {
		t.Fatalf("production web: %+v, want production's own variables", list)
	}
}

func TestPipeline_PromotionRefusesDifferentBuildInputs(t *testing.T) {
	t.Parallel()
	b := setupPipeline(t, "staging")
	web, job := swarmtest.Image(t, "web"), swarmtest.Image(t, "job")
	doc := strings.Replace(webManifest(b.app.Name, "${{ vars.image }}", job, ""), `image = "${{ vars.image }}"`, `image = "${{ vars.image }}"`, 1) + fmt.Sprintf(`
[spec.environments.staging.variables]
image = %q
[spec.environments.production]
promote_from = "staging"
[spec.environments.production.variables]
image = "example.com/other:1"
`, web)
	staging := b.deploy(t, doc)
	expectState(t, staging, store.StateSucceeded)
	prodEnv := b.addEnvironment(t, "production")
	prod := b.promote(t, prodEnv, staging)
	expectState(t, prod, store.StateFailed)
	if prod.ErrorCode != "release_incompatible" || !strings.Contains(prod.ErrorMessage, "services.web.source.image") {
		t.Fatalf("error %s: %s, want release_incompatible naming services.web.source.image", prod.ErrorCode, prod.ErrorMessage)
	}
	if len(b.servicesOf(t, prodEnv.ID)) != 0 {
		t.Fatal("a refused promotion started services")
	}
}

func (b *pipelineBundle) servicesOf(t *testing.T, envID string) []dockerswarm.Service {
	t.Helper()
	list, err := swarmtest.Client(t).ServiceList(context.Background(), dockerswarm.ServiceListOptions{
		Filters: filters.NewArgs(filters.Arg("label", swarm.LabelEnv+"="+envID)),
	})
	must(t, err)
	return list
}
