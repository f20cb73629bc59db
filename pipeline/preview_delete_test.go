package pipeline_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/pipeline"

	"github.com/docker/docker/api/types/filters"
	dockerswarm "github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/api/types/volume"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/pipeline/pipelinetest"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
)

// TestPreviewDelete_BoundsInventoryAndVerifiedRemoval deploys a preview
// with the daemon's bounds, then deletes it: a volume of its inventory
// that cannot be removed keeps the preview (the job is retried), and once
// it is gone the preview's row and every Docker object of it are gone.
func TestPreviewDelete_BoundsInventoryAndVerifiedRemoval(t *testing.T) {
	t.Parallel()
	b := pipelinetest.Setup(t, "production")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cli := swarmtest.Client(t)
	slug := manifest.PreviewSlug(b.App.Name, "feat/v", "")
	pv, err := b.Store.CreateEnvironment(ctx, b.Team.ID, store.EnvironmentParams{
		ApplicationID: b.App.ID, Kind: store.KindPreview, Name: slug, Slug: slug, Branch: "feat/v",
	})
	must(t, err)
	b.Pipeline.PreviewBounds = pipeline.PreviewBounds{DefaultMemoryBytes: 64 << 20, MaxReplicas: 1}

	d := b.DeployTo(t, b.Pipeline, b.App.ID, pv.ID, volumeManifest(b.App.Name, swarmtest.Image(t, "job")))
	pipelinetest.ExpectState(t, d, store.StateSucceeded)
	if w := pipeline.DeploymentWarnings(d); len(w) != 1 || !slices.ContainsFunc(w, func(s string) bool {
		return s == "spec.services.store.resources.memory_bytes: preview_default_limit: no memory limit set: the preview default of 67108864 bytes applies"
	}) {
		t.Errorf("deployment warnings %q, want the default memory limit", w)
	}
	svcs, err := cli.ServiceList(ctx, dockerswarm.ServiceListOptions{Filters: filters.NewArgs(filters.Arg("label", swarm.LabelEnv+"="+pv.ID))})
	must(t, err)
	if len(svcs) != 1 || svcs[0].Spec.TaskTemplate.Resources == nil || svcs[0].Spec.TaskTemplate.Resources.Limits.MemoryBytes != 64<<20 {
		t.Fatalf("preview services %+v, want one with the 64 MiB default limit", svcs)
	}
	// A default the bounds filled in limits the preview but reserves
	// nothing on the node.
	if r := svcs[0].Spec.TaskTemplate.Resources.Reservations; r != nil && r.MemoryBytes != 0 {
		t.Errorf("preview service reserves %d bytes, want the default limit to reserve nothing", r.MemoryBytes)
	}
	inventory, err := b.Store.ListPreviewVolumes(ctx, b.Team.ID, pv.ID)
	must(t, err)
	if len(inventory) != 1 {
		t.Fatalf("inventory %v, want the data volume", inventory)
	}

	del := func() error { return b.Pipeline.DeletePreview(ctx, b.Team.ID, pv.ID) }
	var permanent *pipeline.PermanentError
	if err := del(); !errors.As(err, &permanent) {
		t.Fatalf("deleting a preview not marked for deletion: %v, want a permanent error", err)
	}
	_, err = b.Store.MarkPreviewDeleting(ctx, b.Team.ID, pv.ID, time.Now())
	must(t, err)

	// A running deployment finishes first.
	live, err := b.Store.CreateDeployment(ctx, b.Team.ID, store.DeploymentParams{EnvironmentID: pv.ID, Origin: store.OriginBuild, Actor: "test"})
	must(t, err)
	var wait *pipeline.WaitError
	if err := del(); !errors.As(err, &wait) {
		t.Fatalf("delete with a live deployment: %v, want a wait", err)
	}
	_, err = b.Store.TransitionDeployment(ctx, b.Team.ID, live.ID, []store.DeploymentState{store.StateRequested}, store.StateCancelled)
	must(t, err)

	// A volume in the inventory that survives keeps the preview.
	stray := "slw-test-stray-" + swarmtest.ID()
	_, err = cli.VolumeCreate(ctx, volume.CreateOptions{Name: stray})
	must(t, err)
	t.Cleanup(func() { _ = cli.VolumeRemove(context.Background(), stray, true) })
	must(t, b.Store.RecordPreviewVolumes(ctx, b.Team.ID, pv.ID, []string{stray}))
	if err := del(); err == nil {
		t.Fatal("delete succeeded with an inventoried volume left")
	}
	if _, err := b.Store.GetEnvironment(ctx, b.Team.ID, pv.ID); err != nil {
		t.Fatalf("the preview went although a volume is left: %v", err)
	}
	if s, n, v := envObjects(t, pv.ID); s+n+v != 0 {
		t.Fatalf("after the first attempt: %d services, %d networks, %d volumes left", s, n, v)
	}

	must(t, cli.VolumeRemove(ctx, stray, true))
	must(t, del())
	if _, err := b.Store.GetEnvironment(ctx, b.Team.ID, pv.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("preview after deletion: %v, want not found", err)
	}
	if _, err := cli.VolumeInspect(ctx, inventory[0]); err == nil {
		t.Errorf("volume %s survived the preview", inventory[0])
	}
	// Deleting again (a retried job) is fine.
	must(t, del())
}
