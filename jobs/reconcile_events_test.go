package jobs_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/pipeline/pipelinetest"

	dockerswarm "github.com/docker/docker/api/types/swarm"

	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
)

func TestWatchServiceEvents_ManualScaleTriggersReconcile(t *testing.T) {
	t.Parallel()
	b := pipelinetest.Setup(t, "production")
	web, job := swarmtest.Image(t, "web"), swarmtest.Image(t, "job")
	pipelinetest.ExpectState(t, b.Deploy(t, pipelinetest.WebManifest(b.App.Name, web, job, "")), store.StateSucceeded)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var triggered atomic.Int32
	cli := swarmtest.Client(t)
	go jobs.WatchServiceEvents(ctx, cli, func(context.Context) error {
		triggered.Add(1)
		return nil
	}, slog.New(slog.DiscardHandler))
	time.Sleep(time.Second) // the event stream is open

	svc := b.Services(t)["web"]
	one := uint64(1)
	svc.Spec.Mode.Replicated.Replicas = &one
	if _, err := cli.ServiceUpdate(ctx, svc.ID, svc.Version, svc.Spec, dockerswarm.ServiceUpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for triggered.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("a manual scale of a Slipway service triggered no reconciliation")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
