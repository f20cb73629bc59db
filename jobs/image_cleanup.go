package jobs

import (
	"context"
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

// ImageRemover removes built images outside keep (runtime/build.Builder).
type ImageRemover interface {
	RemoveUnusedImages(ctx context.Context, keep map[string]bool) ([]string, error)
}

// ImageCleanupWorker runs ImageCleanupArgs.
type ImageCleanupWorker struct {
	river.WorkerDefaults[ImageCleanupArgs]
	Store  *store.Store
	Images ImageRemover
}

// Work keeps every image a live or recent deployment prepared and removes
// the rest of the built ones.
func (w *ImageCleanupWorker) Work(ctx context.Context, _ *river.Job[ImageCleanupArgs]) error {
	if w.Images == nil {
		return nil
	}
	keep, err := pipeline.RetainedImages(ctx, w.Store)
	if err != nil {
		return err
	}
	_, err = w.Images.RemoveUnusedImages(ctx, keep)
	return err
}
