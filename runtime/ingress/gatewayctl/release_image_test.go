package gatewayctl_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"
)

// releaseDockerfile is the repository's Dockerfile: the binary alone, with
// /slipway as entrypoint and no subcommand.
const releaseDockerfile = "FROM scratch\nCOPY slipway /slipway\nENTRYPOINT [\"/slipway\"]\n"

// TestGateway_ReleaseImage: the Slipway release image, given as [ingress]
// image, runs the gateway, since the container's entrypoint names the
// subcommand; it answers an unknown host with the gateway's 404.
func TestGateway_ReleaseImage(t *testing.T) {
	e := setup(t)
	ctx := t.Context()
	bin, err := os.ReadFile(e.bin)
	if err != nil {
		t.Fatal(err)
	}
	tag := "slipway-release-test:" + e.id
	if err := e.m.BuildImageFromDockerfile(ctx, releaseDockerfile, bin, tag); err != nil {
		t.Fatal(err)
	}
	// Removed after the container that runs it (cleanups run last first).
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := e.m.Remove(ctx); err != nil {
			t.Logf("remove gateway: %v", err)
		}
		if _, err := e.cli.ImageRemove(ctx, tag, image.RemoveOptions{PruneChildren: true}); err != nil {
			t.Logf("remove %s: %v", tag, err)
		}
	})
	cfg := e.cfg
	cfg.Image = tag
	if _, err := e.m.EnsureGateway(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the gateway in the release image to answer", time.Minute, expect(e.httpAddr, "nobody.example.com", "/", 404, ""))
}
