// Package pipelinetest is the test kit of package pipeline: a team with
// one application and environment on a fresh schema of the real database,
// a pipeline over the real Swarm, and the helpers that deploy through it
// as the worker would. Tests of pipeline and of the jobs that follow it
// (GitHub notifications, image cleanup, drift repair) share it.
//
// It may import what pipeline does plus the store and swarm test kits;
// only tests import it.
package pipelinetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	dockerswarm "github.com/docker/docker/api/types/swarm"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/metrics"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/runtime/image"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// Bundle is one application with one environment on a real database and
// the real Swarm, deployed through Pipeline.
type Bundle struct {
	Store    *store.Store
	Pipeline *pipeline.Pipeline
	Driver   *swarm.Driver
	Team     store.Team
	App      store.Application
	Env      store.Environment
	// Queue records what Pipeline queues.
	Queue *Queue
}

// Queue is a pipeline.Queue that records the deployments queued (the
// rollbacks) and queues nothing else.
type Queue struct {
	mu          sync.Mutex
	deployments []string
}

var _ pipeline.Queue = (*Queue)(nil)

// Deploy records the deployment.
func (q *Queue) Deploy(_ context.Context, _ *store.Store, _, deploymentID string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.deployments = append(q.deployments, deploymentID)
	return nil
}

// StateChanged queues nothing.
func (q *Queue) StateChanged(context.Context, *store.Store, store.Deployment) error { return nil }

// LinksChanged queues nothing.
func (q *Queue) LinksChanged(context.Context, *store.Store, string) error { return nil }

// Deployments returns the ids of the deployments queued so far.
func (q *Queue) Deployments() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.deployments...)
}

// Setup makes the bundle, its environment named envName. Every object the
// team's deployments make (any environment, preview or link network) is
// removed when the test ends; a test starting a River client later stops
// it before that.
func Setup(t *testing.T, envName string) *Bundle {
	t.Helper()
	ctx := context.Background()
	st := storetest.NewSchema(t)
	cli := swarmtest.Client(t)
	b := &Bundle{Store: st, Driver: swarm.NewDriver(cli, nil), Queue: &Queue{}}
	var err error
	id := swarmtest.ID()
	b.Team, err = st.CreateTeam(ctx, "Team "+id, "team-"+id)
	must(t, err)
	b.App, err = st.CreateApplication(ctx, b.Team.ID, "app-"+id)
	must(t, err)
	b.Env, err = st.CreateEnvironment(ctx, b.Team.ID, store.EnvironmentParams{
		ApplicationID: b.App.ID, Kind: store.KindEnvironment, Name: envName, Slug: envName,
	})
	must(t, err)
	b.Pipeline = &pipeline.Pipeline{
		Store:              st,
		Driver:             b.Driver,
		Images:             image.NewResolver(cli, false),
		ConvergenceTimeout: 150 * time.Second,
		Metrics:            metrics.New(nil),
		Queue:              b.Queue,
	}
	swarmtest.RemoveOnCleanup(t, swarm.LabelTeam+"="+b.Team.ID)
	return b
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Deploy saves the manifest as a new revision, requests a deployment and
// advances it to the end, as the worker would.
func (b *Bundle) Deploy(t *testing.T, toml string) store.Deployment {
	t.Helper()
	return b.DeployTo(t, b.Pipeline, b.App.ID, b.Env.ID, toml)
}

// DeployTo is Deploy for any application and environment of the team,
// through p.
func (b *Bundle) DeployTo(t *testing.T, p *pipeline.Pipeline, appID, envID, toml string) store.Deployment {
	t.Helper()
	return b.DeployAs(t, p, b.Team.ID, appID, envID, toml)
}

// DeployAs is DeployTo for an application of another team of the
// bundle's database.
func (b *Bundle) DeployAs(t *testing.T, p *pipeline.Pipeline, teamID, appID, envID, toml string) store.Deployment {
	t.Helper()
	return b.advance(t, p, teamID, b.request(t, teamID, appID, envID, toml).ID)
}

// SaveRevision saves toml as the application's next manifest revision.
func (b *Bundle) SaveRevision(t *testing.T, appID, toml string) int64 {
	t.Helper()
	return b.saveRevision(t, b.Team.ID, appID, toml)
}

func (b *Bundle) saveRevision(t *testing.T, teamID, appID, toml string) int64 {
	t.Helper()
	m, err := manifest.Decode([]byte(toml), "toml")
	must(t, err)
	if errs := manifest.Validate(m, manifest.ValidateOptions{}); len(errs) > 0 {
		t.Fatalf("manifest invalid: %v", errs)
	}
	raw, err := json.Marshal(m)
	must(t, err)
	rev, err := b.Store.CreateManifestRevision(context.Background(), teamID, appID, store.RevisionParams{Manifest: raw, Source: toml, Author: "test"})
	must(t, err)
	return rev.Revision
}

// RequestDeployment saves toml as the application's manifest and requests
// a deployment of it to envID, without running it.
func (b *Bundle) RequestDeployment(t *testing.T, appID, envID, toml string) store.Deployment {
	t.Helper()
	return b.request(t, b.Team.ID, appID, envID, toml)
}

func (b *Bundle) request(t *testing.T, teamID, appID, envID, toml string) store.Deployment {
	t.Helper()
	d, err := b.Store.CreateDeployment(context.Background(), teamID, store.DeploymentParams{
		EnvironmentID: envID, Revision: b.saveRevision(t, teamID, appID, toml), Origin: store.OriginBuild, Actor: "test",
	})
	must(t, err)
	return d
}

// AdvanceWith runs every remaining step of deployment id with p.
func (b *Bundle) AdvanceWith(t *testing.T, p *pipeline.Pipeline, id string) store.Deployment {
	t.Helper()
	return b.advance(t, p, b.Team.ID, id)
}

func (b *Bundle) advance(t *testing.T, p *pipeline.Pipeline, teamID, id string) store.Deployment {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := p.Advance(ctx, teamID, id); err != nil {
		t.Fatalf("advance %s: %v", id, err)
	}
	d, err := b.Store.GetDeployment(ctx, teamID, id)
	must(t, err)
	return d
}

// Advance runs every remaining step of deployment id with the bundle's
// pipeline.
func (b *Bundle) Advance(t *testing.T, id string) store.Deployment {
	t.Helper()
	return b.AdvanceWith(t, b.Pipeline, id)
}

// Promote requests a promotion of src into env and advances it.
func (b *Bundle) Promote(t *testing.T, env store.Environment, src store.Deployment) store.Deployment {
	t.Helper()
	d, err := b.Store.CreateDeployment(context.Background(), b.Team.ID, store.DeploymentParams{
		EnvironmentID: env.ID, Revision: src.Revision, Origin: store.OriginPromotion, PromotedFrom: src.ID, Actor: "test",
	})
	must(t, err)
	return b.Advance(t, d.ID)
}

// AddEnvironment adds an environment promoted from the bundle's; its
// objects go with the team's.
func (b *Bundle) AddEnvironment(t *testing.T, name string) store.Environment {
	t.Helper()
	env, err := b.Store.CreateEnvironment(context.Background(), b.Team.ID, store.EnvironmentParams{
		ApplicationID: b.App.ID, Kind: store.KindEnvironment, Name: name, Slug: name, PromoteFrom: b.Env.ID,
	})
	must(t, err)
	return env
}

// Services returns the bundle environment's Swarm services (not job runs)
// by manifest service name.
func (b *Bundle) Services(t *testing.T) map[string]dockerswarm.Service {
	t.Helper()
	out := map[string]dockerswarm.Service{}
	for _, s := range b.ServicesOf(t, b.Env.ID) {
		if s.Spec.Labels[swarm.LabelJob] == "" {
			out[s.Spec.Labels[swarm.LabelService]] = s
		}
	}
	return out
}

// ServicesOf lists every Swarm service of environment envID, job runs
// included.
func (b *Bundle) ServicesOf(t *testing.T, envID string) []dockerswarm.Service {
	t.Helper()
	list, err := swarmtest.Client(t).ServiceList(context.Background(), dockerswarm.ServiceListOptions{
		Filters: filters.NewArgs(filters.Arg("label", swarm.LabelEnv+"="+envID)),
	})
	must(t, err)
	return list
}

// ExpectState fails the test unless d is in state want.
func ExpectState(t *testing.T, d store.Deployment, want store.DeploymentState) {
	t.Helper()
	if d.State != want {
		t.Fatalf("deployment %s is %s (%s: %s), want %s\nsteps: %s", d.ID, d.State, d.ErrorCode, d.ErrorMessage, want, d.Steps)
	}
}

// WebManifest is an application name with two image services: web (two
// replicas, HTTP health check on :8080/health, VERSION=one plus the extra
// environment lines) and worker (sleeping).
func WebManifest(name, webImage, workerImage string, extra string) string {
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
interval_seconds = 2
timeout_seconds = 2
start_period_seconds = 30
retries = 5
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

// Eventually polls cond until it holds and fails the test when it still
// does not after within: tests wait on states, and within is only a bound
// for a broken run, generous for a busy machine. cond's second result
// describes what it saw, for the failure message.
func Eventually(t *testing.T, what string, within time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		done, saw := cond()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s; last seen: %s", what, within, saw)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
