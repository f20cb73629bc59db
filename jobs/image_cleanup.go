package jobs

import (
	"context"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/store"
)

// ImageCleanupArgs removes the images Slipway built that no environment
// runs, deploys or keeps for a rollback or a promotion.
type ImageCleanupArgs struct{}

// Kind is the River job kind.
func (ImageCleanupArgs) Kind() string { return "image_cleanup" }

// ImageCleanupInterval is how often built images are cleaned up.
const ImageCleanupInterval = time.Hour

// RegistryPruneGrace is how long a manifest in the registry must have
// stayed unreferenced before the cleanup deletes it. A deployment pushes
// its images while it prepares and records them when that step ends: a
// cleanup in between sees them unreferenced, and must not delete them.
const RegistryPruneGrace = 6 * time.Hour

// ImageRemover removes built images outside keep (runtime/build.Builder).
type ImageRemover interface {
	RemoveUnusedImages(ctx context.Context, keep map[string]bool) ([]string, error)
}

// ImageCleanupWorker runs ImageCleanupArgs.
type ImageCleanupWorker struct {
	river.WorkerDefaults[ImageCleanupArgs]
	Store  *store.Store
	Images ImageRemover
	// Registry, when set, loses the images no kept deployment runs too.
	Registry pipeline.ImageRegistry
	// PruneGrace overrides RegistryPruneGrace (tests).
	PruneGrace time.Duration
}

func (w *ImageCleanupWorker) grace() time.Duration {
	if w.PruneGrace > 0 {
		return w.PruneGrace
	}
	return RegistryPruneGrace
}

// Work keeps every image a live or recent deployment prepared and removes
// the rest of the built ones.
func (w *ImageCleanupWorker) Work(ctx context.Context, _ *river.Job[ImageCleanupArgs]) error {
	keep, err := pipeline.RetainedImages(ctx, w.Store)
	if err != nil {
		return err
	}
	if w.Images != nil {
		if _, err := w.Images.RemoveUnusedImages(ctx, keep); err != nil {
			return err
		}
	}
	return w.pruneRegistry(ctx, keep)
}

// pruneRegistry deletes from the registry the manifests of images no kept
// deployment runs and that stayed unreferenced for RegistryPruneGrace:
// keep holds image IDs and digest-pinned references.
func (w *ImageCleanupWorker) pruneRegistry(ctx context.Context, keep map[string]bool) error {
	if w.Registry == nil {
		return nil
	}
	t, err := w.Registry.Target(ctx)
	if err != nil || !t.Enabled() {
		return err
	}
	digests := map[string]bool{}
	for ref := range keep {
		if _, d, ok := strings.Cut(ref, "@"); ok {
			digests[d] = true
		}
	}
	_, err = t.Prune(ctx, digests, func(unreferenced []string) ([]string, error) {
		return w.Store.DuePruneMarks(ctx, unreferenced, w.grace())
	})
	return err
}
