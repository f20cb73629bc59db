package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/pipeline"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	dockerswarm "github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"github.com/slipwayhq/slipway/pipeline/pipelinetest"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// volumeManifest is one long-running service mounting a named volume.
func volumeManifest(app, img string) string {
	return fmt.Sprintf(`
api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[[spec.services]]
name = "store"
command = ["/app", "--sleep", "3600"]
[spec.services.source]
type = "image"
image = %q
[[spec.services.mounts]]
volume = "data"
target = "/data"

[[spec.volumes]]
name = "data"
`, app, img)
}

// envObjects counts what Docker holds for the environment, by label.
func envObjects(t *testing.T, envID string) (services, networks, volumes int) {
	t.Helper()
	ctx, cli := context.Background(), swarmtest.Client(t)
	byEnv := filters.NewArgs(filters.Arg("label", swarm.LabelEnv+"="+envID))
	svcs, err := cli.ServiceList(ctx, dockerswarm.ServiceListOptions{Filters: byEnv})
	must(t, err)
	nets, err := cli.NetworkList(ctx, network.ListOptions{Filters: byEnv})
	must(t, err)
	vols, err := cli.VolumeList(ctx, volume.ListOptions{Filters: byEnv})
	must(t, err)
	return len(svcs), len(nets), len(vols.Volumes)
}

func TestEnvironmentTeardown_RemovesWhatRunsAndKeepsVolumes(t *testing.T) {
	t.Parallel()
	b := pipelinetest.Setup(t, "production")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pipelinetest.ExpectState(t, b.Deploy(t, volumeManifest(b.App.Name, swarmtest.Image(t, "job"))), store.StateSucceeded)
	if s, n, v := envObjects(t, b.Env.ID); s != 1 || n == 0 || v != 1 {
		t.Fatalf("after deploy: %d services, %d networks, %d volumes; want 1, >0, 1", s, n, v)
	}

	gateway := &fakeConnector{}
	b.Pipeline.Routes = &pipeline.GatewayRoutes{Store: b.Store, Gateway: gateway}
	args := pipeline.Teardown{TeamID: b.Team.ID, EnvironmentID: b.Env.ID, Name: b.Env.Name}
	removed, err := b.Pipeline.TeardownEnvironment(ctx, args)
	if err != nil {
		t.Fatal(err)
	}
	if s, n, v := envObjects(t, b.Env.ID); s != 0 || n != 0 || v != 1 {
		t.Fatalf("after teardown: %d services, %d networks, %d volumes; want 0, 0, 1", s, n, v)
	}
	if len(removed.Services) != 1 || len(removed.RetainedVolumes) != 1 {
		t.Errorf("removed = %+v; want one service and the data volume retained", removed)
	}
	ingress := swarm.IngressNetworkName(store.ShortID(b.Env.ID))
	if !slices.Contains(gateway.disconnected, ingress) {
		t.Errorf("gateway detached from %v, want %s", gateway.disconnected, ingress)
	}

	// A retry (River's, or a second job) finds nothing to remove and still
	// keeps the volume.
	again, err := b.Pipeline.TeardownEnvironment(ctx, args)
	if err != nil {
		t.Fatalf("second teardown: %v", err)
	}
	if len(again.Services)+len(again.Networks) != 0 || len(again.RetainedVolumes) != 1 {
		t.Errorf("second teardown removed %+v", again)
	}
	if _, _, v := envObjects(t, b.Env.ID); v != 1 {
		t.Fatalf("the volume is gone after a second teardown (%d left)", v)
	}

	events, err := b.Store.ListEvents(ctx, b.Team.ID, store.EventFilter{ObjectType: "environment", ObjectID: b.Env.ID})
	must(t, err)
	if len(events) == 0 || events[0].Verb != "environment.teardown" {
		t.Fatalf("events = %+v, want environment.teardown", events)
	}
	var details struct {
		Retained []string `json:"retained_volumes"`
	}
	must(t, json.Unmarshal(events[0].Details, &details))
	if len(details.Retained) != 1 || details.Retained[0] != removed.RetainedVolumes[0] {
		t.Errorf("event lists retained volumes %v, want %v", details.Retained, removed.RetainedVolumes)
	}
}

func TestEnvironmentTeardown_PreviewRemovesVolumes(t *testing.T) {
	t.Parallel()
	b := pipelinetest.Setup(t, "pr-1")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pipelinetest.ExpectState(t, b.Deploy(t, volumeManifest(b.App.Name, swarmtest.Image(t, "job"))), store.StateSucceeded)
	args := pipeline.Teardown{TeamID: b.Team.ID, EnvironmentID: b.Env.ID, Name: b.Env.Name, Preview: true}
	for i := range 2 {
		if _, err := b.Pipeline.TeardownEnvironment(ctx, args); err != nil {
			t.Fatalf("teardown %d: %v", i+1, err)
		}
		if s, n, v := envObjects(t, b.Env.ID); s+n+v != 0 {
			t.Fatalf("after preview teardown %d: %d services, %d networks, %d volumes left", i+1, s, n, v)
		}
	}
}

// TestEnvironmentTeardown_DockerUnreachableIsRetried: the error is one to
// retry (River retries it with backoff), not a permanent one.
func TestEnvironmentTeardown_DockerUnreachableIsRetried(t *testing.T) {
	t.Parallel()
	cli, err := client.NewClientWithOpts(client.WithHost("unix://"+t.TempDir()+"/no-docker.sock"), client.WithAPIVersionNegotiation())
	must(t, err)
	defer cli.Close()
	st := storetest.New(t)
	p := &pipeline.Pipeline{Store: st, Driver: swarm.NewDriver(cli, nil)}
	_, err = p.TeardownEnvironment(context.Background(), pipeline.Teardown{TeamID: "team_x", EnvironmentID: "env_x"})
	if err == nil {
		t.Fatal("teardown without Docker succeeded")
	}
	var permanent *pipeline.PermanentError
	if errors.As(err, &permanent) {
		t.Fatalf("teardown without Docker is a permanent error: %v", err)
	}
	var engineErr *swarm.Error
	if !errors.As(err, &engineErr) || engineErr.Code != swarm.CodeDockerUnavailable {
		t.Errorf("err = %v, want a docker_unavailable *swarm.Error", err)
	}
}
