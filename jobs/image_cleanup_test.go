package jobs_test

import (
	"context"
	"testing"

	"github.com/slipwayhq/slipway/pipeline/pipelinetest"

	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
)

type recordingRemover struct{ keep map[string]bool }

func (r *recordingRemover) RemoveUnusedImages(_ context.Context, keep map[string]bool) ([]string, error) {
	r.keep = keep
	return nil, nil
}

// The removal itself is proven on the real engine in runtime/build
// (TestBuilder_RemoveUnusedImages); this checks what cleanup keeps.
func TestImageCleanup_KeepsWhatDeploymentsRun(t *testing.T) {
	t.Parallel()
	b := pipelinetest.Setup(t, "production")
	web, job := swarmtest.Image(t, "web"), swarmtest.Image(t, "job")
	d := b.Deploy(t, pipelinetest.WebManifest(b.App.Name, web, job, ""))
	pipelinetest.ExpectState(t, d, store.StateSucceeded)

	remover := &recordingRemover{}
	w := &jobs.ImageCleanupWorker{Store: b.Store, Images: remover}
	if err := w.Work(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	cli := swarmtest.Client(t)
	for _, ref := range []string{web, job} {
		info, err := cli.ImageInspect(context.Background(), ref)
		must(t, err)
		if !remover.keep[info.ID] {
			t.Errorf("cleanup would remove %s (%s), which the environment runs", ref, info.ID)
		}
	}
}
