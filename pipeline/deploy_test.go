package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/pipeline"

	"github.com/docker/docker/api/types/filters"
	dockerswarm "github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/api/types/volume"

	"github.com/slipwayhq/slipway/notify"
	"github.com/slipwayhq/slipway/pipeline/pipelinetest"
	"github.com/slipwayhq/slipway/runtime/image"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestPipeline_TwoServicesConverge(t *testing.T) {
	t.Parallel()
	b := pipelinetest.Setup(t, "production")
	web, job := swarmtest.Image(t, "web"), swarmtest.Image(t, "job")

	d := b.Deploy(t, pipelinetest.WebManifest(b.App.Name, web, job, ""))
	pipelinetest.ExpectState(t, d, store.StateSucceeded)

	svcs := b.Services(t)
	if len(svcs) != 2 {
		t.Fatalf("want services web and worker, got %v", keys(svcs))
	}
	if r := *svcs["web"].Spec.Mode.Replicated.Replicas; r != 2 {
		t.Errorf("web replicas = %d, want 2", r)
	}
	progress, err := pipeline.ParseProgress(d.Steps)
	must(t, err)
	for _, step := range []string{"capture", "prepare", "plan", "rollout:web", "rollout:worker", "cleanup"} {
		if !progress.Done(step) {
			t.Errorf("step %s not done: %+v", step, progress.Find(step))
		}
	}
	if d.RenderedManifest == nil || d.CapturedManifest == nil {
		t.Error("the deployment did not record its captured and rendered manifest")
	}
	rendered, err := manifest.Decode(d.RenderedManifest, "json")
	must(t, err)
	if want, err := manifest.SpecHash(rendered, nil); err != nil || d.SpecHash != want {
		t.Errorf("recorded spec hash %q, want manifest.SpecHash of the rendered manifest %q (%v)", d.SpecHash, want, err)
	}

	// /metrics counts the deployment.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Authorization", "Bearer metrics-token")
	b.Pipeline.Metrics.Handler("metrics-token").ServeHTTP(rec, req)
	if body := rec.Body.String(); rec.Code != http.StatusOK || !strings.Contains(body, `slipway_deployments_total{outcome="succeeded"} 1`) {
		t.Errorf("/metrics answered %d without the deployment counter:\n%.2000s", rec.Code, body)
	}
}

func TestPipeline_FailedHealthCheckRollsBackAutomatically(t *testing.T) {
	t.Parallel()
	b := pipelinetest.Setup(t, "production")
	told := &recordingNotifier{}
	b.Pipeline.Notify = told
	web, job := swarmtest.Image(t, "web"), swarmtest.Image(t, "job")
	good := pipelinetest.WebManifest(b.App.Name, web, job, "") + `
[spec.environments.production]
rollback = "automatic"
`
	first := b.Deploy(t, good)
	pipelinetest.ExpectState(t, first, store.StateSucceeded)

	// Never healthy, and with no start period to wait out first.
	bad := strings.NewReplacer(`VERSION = "one"`, `VERSION = "two"
HEALTHY = "false"`, "start_period_seconds = 30", "start_period_seconds = 0").Replace(good)
	second := b.Deploy(t, bad)
	pipelinetest.ExpectState(t, second, store.StateFailed)
	if second.ErrorCode != swarm.CodeRolloutFailed && second.ErrorCode != swarm.CodeConvergenceTimeout {
		t.Fatalf("error code %q, want a rollout failure", second.ErrorCode)
	}
	if strings.Contains(second.ErrorMessage, second.ErrorCode) {
		t.Errorf("error message %q names its code %s again", second.ErrorMessage, second.ErrorCode)
	}

	queued := b.Queue.Deployments()
	if len(queued) != 1 {
		t.Fatalf("want one rollback deployment queued, got %v", queued)
	}
	rollback := b.Advance(t, queued[0])
	pipelinetest.ExpectState(t, rollback, store.StateSucceeded)
	// The spec hash is the identity of what runs: the rollback runs the
	// first deployment's, which the second's differs from.
	if first.SpecHash == "" || rollback.SpecHash != first.SpecHash || second.SpecHash == first.SpecHash {
		t.Errorf("spec hashes: first %q, second %q, rollback %q; want the rollback's the first's, the second's different",
			first.SpecHash, second.SpecHash, rollback.SpecHash)
	}
	if rollback.Origin != store.OriginRollback || rollback.RestoredFrom != first.ID {
		t.Errorf("rollback origin %s restored from %s, want rollback of %s", rollback.Origin, rollback.RestoredFrom, first.ID)
	}
	env := b.Services(t)["web"].Spec.TaskTemplate.ContainerSpec.Env
	if !contains(env, "VERSION=one") || contains(env, "HEALTHY=false") {
		t.Errorf("web runs %v after the rollback, want the first deployment's environment", env)
	}
	// Each outcome was told once, in its transaction, naming the deployment.
	want := []string{
		"deployment.succeeded " + first.ID + " ",
		"deployment.failed " + second.ID + " " + second.ErrorCode,
		"deployment.rolled_back " + rollback.ID + " ",
	}
	if got := told.summary(); !slices.Equal(got, want) {
		t.Errorf("notifications %q, want %q", got, want)
	}
}

// recordingNotifier records the events the pipeline emits.
type recordingNotifier struct {
	mu     sync.Mutex
	events []notify.Event
}

func (r *recordingNotifier) Emit(_ context.Context, tx *store.Store, ev notify.Event) error {
	if tx.Tx() == nil {
		return errors.New("emitted outside the transaction that records the outcome")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
	return nil
}

func (r *recordingNotifier) summary() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, ev := range r.events {
		out = append(out, string(ev.Kind)+" "+ev.DeploymentID+" "+ev.Code)
	}
	return out
}

func TestPipeline_JobRunsBeforeRolloutAfterDependencies(t *testing.T) {
	t.Parallel()
	b := pipelinetest.Setup(t, "production")
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
interval_seconds = 2
timeout_seconds = 2
start_period_seconds = 30
retries = 5

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
`, b.App.Name, web, job)
	d := b.Deploy(t, toml)
	pipelinetest.ExpectState(t, d, store.StateSucceeded)
	progress, err := pipeline.ParseProgress(d.Steps)
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
	b := pipelinetest.Setup(t, "production")
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
`, b.App.Name, job)
	d := b.Deploy(t, toml)
	pipelinetest.ExpectState(t, d, store.StateFailed)
	if d.ErrorCode != swarm.CodeJobFailed {
		t.Errorf("error code %q, want job_failed", d.ErrorCode)
	}
	progress, _ := pipeline.ParseProgress(d.Steps)
	if s := progress.Find("job:migrate"); s == nil || !strings.Contains(s.Output, "migration failed on purpose") {
		t.Errorf("job output not kept: %+v", s)
	}
	if _, ok := b.Services(t)["api"]; ok {
		t.Error("api was rolled out although its job failed")
	}
}

func TestPipeline_EmptyApplicationRemovesServicesKeepsVolumes(t *testing.T) {
	t.Parallel()
	b := pipelinetest.Setup(t, "production")
	job := swarmtest.Image(t, "job")
	withVolume := volumeManifest(b.App.Name, job)
	pipelinetest.ExpectState(t, b.Deploy(t, withVolume), store.StateSucceeded)
	empty := fmt.Sprintf(`
api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q
`, b.App.Name)
	pipelinetest.ExpectState(t, b.Deploy(t, empty), store.StateSucceeded)
	if svcs := b.Services(t); len(svcs) != 0 {
		t.Errorf("services left after deploying an empty application: %v", keys(svcs))
	}
	cli := swarmtest.Client(t)
	vols, err := cli.VolumeList(context.Background(), volume.ListOptions{
		Filters: filters.NewArgs(filters.Arg("label", swarm.LabelEnv+"="+b.Env.ID)),
	})
	must(t, err)
	if len(vols.Volumes) != 1 {
		t.Errorf("want the data volume kept, got %d volumes", len(vols.Volumes))
	}
}

func TestPipeline_MissingImageFailsAndKeepsRunningDeployment(t *testing.T) {
	t.Parallel()
	b := pipelinetest.Setup(t, "production")
	web, job := swarmtest.Image(t, "web"), swarmtest.Image(t, "job")
	good := pipelinetest.WebManifest(b.App.Name, web, job, "")
	pipelinetest.ExpectState(t, b.Deploy(t, good), store.StateSucceeded)
	before := b.Services(t)["web"].Version.Index

	bad := strings.Replace(good, web, "slipway-test/does-not-exist:1", 1)
	d := b.Deploy(t, bad)
	pipelinetest.ExpectState(t, d, store.StateFailed)
	if d.ErrorCode != image.CodeUnavailable {
		t.Errorf("error code %q, want %s", d.ErrorCode, image.CodeUnavailable)
	}
	if strings.Contains(d.ErrorMessage, d.ErrorCode) {
		t.Errorf("error message %q names its code %s again", d.ErrorMessage, d.ErrorCode)
	}
	if after := b.Services(t)["web"].Version.Index; after != before {
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

func stepNames(p pipeline.Progress) []string {
	out := make([]string, len(p.Steps))
	for i, s := range p.Steps {
		out[i] = s.Name
	}
	return out
}

func TestReconcile_RepairsManualScale(t *testing.T) {
	t.Parallel()
	b := pipelinetest.Setup(t, "production")
	web, job := swarmtest.Image(t, "web"), swarmtest.Image(t, "job")
	d := b.Deploy(t, pipelinetest.WebManifest(b.App.Name, web, job, ""))
	pipelinetest.ExpectState(t, d, store.StateSucceeded)

	ctx := context.Background()
	cli := swarmtest.Client(t)
	svc := b.Services(t)["web"]
	one := uint64(1)
	svc.Spec.Mode.Replicated.Replicas = &one
	if _, err := cli.ServiceUpdate(ctx, svc.ID, svc.Version, svc.Spec, dockerswarm.ServiceUpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The periodic scan finds the environment among every maintained one.
	if err := b.Pipeline.ReconcileAll(ctx); err != nil {
		t.Fatal(err)
	}
	if r := *b.Services(t)["web"].Spec.Mode.Replicated.Replicas; r != 2 {
		t.Fatalf("web has %d replicas after reconciliation, want 2", r)
	}
	repaired, err := b.Pipeline.Reconcile(ctx, b.Team.ID, d.ID)
	must(t, err)
	if len(repaired) != 0 {
		t.Fatalf("a second reconciliation repaired %v: it should find nothing to do", repaired)
	}
	events, err := b.Store.ListEvents(ctx, b.Team.ID, store.EventFilter{ObjectType: "deployment", ObjectID: d.ID})
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

func TestPipeline_PromotionRunsTheSameImage(t *testing.T) {
	t.Parallel()
	b := pipelinetest.Setup(t, "staging")
	web, job := swarmtest.Image(t, "web"), swarmtest.Image(t, "job")
	doc := pipelinetest.WebManifest(b.App.Name, web, job, `GREETING = "${{ vars.greeting }}"`) + `
[spec.environments.staging.variables]
greeting = "hello from staging"
[spec.environments.production]
promote_from = "staging"
[spec.environments.production.variables]
greeting = "hello from production"
`
	staging := b.Deploy(t, doc)
	pipelinetest.ExpectState(t, staging, store.StateSucceeded)
	prodEnv := b.AddEnvironment(t, "production")

	prod := b.Promote(t, prodEnv, staging)
	pipelinetest.ExpectState(t, prod, store.StateSucceeded)

	stagingProgress, _ := pipeline.ParseProgress(staging.Steps)
	prodProgress, _ := pipeline.ParseProgress(prod.Steps)
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
	b := pipelinetest.Setup(t, "staging")
	web, job := swarmtest.Image(t, "web"), swarmtest.Image(t, "job")
	doc := strings.Replace(pipelinetest.WebManifest(b.App.Name, "${{ vars.image }}", job, ""), `image = "${{ vars.image }}"`, `image = "${{ vars.image }}"`, 1) + fmt.Sprintf(`
[spec.environments.staging.variables]
image = %q
[spec.environments.production]
promote_from = "staging"
[spec.environments.production.variables]
image = "example.com/other:1"
`, web)
	staging := b.Deploy(t, doc)
	pipelinetest.ExpectState(t, staging, store.StateSucceeded)
	prodEnv := b.AddEnvironment(t, "production")
	prod := b.Promote(t, prodEnv, staging)
	pipelinetest.ExpectState(t, prod, store.StateFailed)
	if prod.ErrorCode != "release_incompatible" || !strings.Contains(prod.ErrorMessage, "services.web.source.image") {
		t.Fatalf("error %s: %s, want release_incompatible naming services.web.source.image", prod.ErrorCode, prod.ErrorMessage)
	}
	if len(b.ServicesOf(t, prodEnv.ID)) != 0 {
		t.Fatal("a refused promotion started services")
	}
}
