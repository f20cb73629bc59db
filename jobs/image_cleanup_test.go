package jobs_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"

	"github.com/slipwayhq/slipway/pipeline/pipelinetest"

	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/runtime/registry"
	"github.com/slipwayhq/slipway/runtime/registry/registrytest"
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

type fixedRegistry struct{ t registry.Target }

func (f fixedRegistry) Target(context.Context) (registry.Target, error) { return f.t, nil }
func (f fixedRegistry) Push(context.Context, registry.Target, string, string) (string, error) {
	return "", errors.New("no push in this test")
}

// TestImageCleanup_RegistryKeepsAnImageNotYetRecorded pushes an image to
// the registry as a deployment's prepare step does, before any deployment
// records it: the hourly cleanup must not delete it then (the race), nor
// while it stays unreferenced for less than the grace period; once it did
// for longer, it goes.
func TestImageCleanup_RegistryKeepsAnImageNotYetRecorded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := pipelinetest.Setup(t, "production")
	cli := swarmtest.Client(t)
	reg := registrytest.Serve(t, "127.0.0.1:0", "pw-"+swarmtest.ID())
	target := registry.Target{Host: reg.Host, Prefix: "slipway", User: registry.User, Password: reg.Password, APIURL: "http://" + reg.Host}
	id := registrytest.Variant(t, cli, swarmtest.Image(t, "web"))
	repo := target.Repository(b.Team.ID, b.App.Name, "web")
	ref, err := target.Push(ctx, cli, id, repo)
	must(t, err)
	t.Cleanup(func() {
		_, _ = cli.ImageRemove(context.Background(), repo+":id-"+strings.TrimPrefix(id, "sha256:")[:12], image.RemoveOptions{})
	})
	present := func() bool {
		req, _ := http.NewRequestWithContext(ctx, http.MethodHead, "http://"+reg.Host+"/v2/"+strings.TrimPrefix(repo, reg.Host+"/")+"/manifests/"+ref[strings.Index(ref, "@")+1:], nil)
		req.SetBasicAuth(registry.User, reg.Password)
		req.Header.Set("Accept", "application/vnd.docker.distribution.manifest.v2+json")
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	if !present() {
		t.Fatal("the pushed manifest is not in the registry")
	}

	w := &jobs.ImageCleanupWorker{Store: b.Store, Registry: fixedRegistry{target}, PruneGrace: time.Hour}
	for run := 1; run <= 2; run++ {
		must(t, w.Work(ctx, nil))
		if !present() {
			t.Fatalf("cleanup run %d deleted an image pushed moments ago that no deployment recorded yet", run)
		}
	}
	// An hour later (the mark moved back), still unreferenced: it goes.
	_, err = b.Store.Pool().Exec(ctx, `UPDATE registry_prune_marks SET marked_at = marked_at - interval '2 hours'`)
	must(t, err)
	must(t, w.Work(ctx, nil))
	if present() {
		t.Fatal("the manifest unreferenced for longer than the grace period was kept")
	}
}
