package gatewayctl_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"github.com/slipwayhq/slipway/runtime/ingress/gatewayctl"
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
	tag := buildReleaseImage(t, e.cli, e.bin, "slipway-release-test:"+e.id, e.m)
	cfg := e.cfg
	cfg.Image = tag
	if _, err := e.m.EnsureGateway(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the gateway in the release image to answer", time.Minute, expect(e.httpAddr, "nobody.example.com", "/", 404, ""))
}

// buildReleaseImage builds releaseDockerfile with bin as /slipway under
// tag, removed when the test ends, after m's container that runs it.
func buildReleaseImage(t *testing.T, cli *client.Client, bin, tag string, m *gatewayctl.Manager) string {
	t.Helper()
	body, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range []struct {
		name string
		body []byte
		mode int64
	}{{"Dockerfile", []byte(releaseDockerfile), 0o644}, {"slipway", body, 0o755}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.body))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	resp, err := cli.ImageBuild(t.Context(), &buf, build.ImageBuildOptions{Tags: []string{tag}, Remove: true, ForceRemove: true})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var msg struct {
			Error string `json:"error"`
		}
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if msg.Error != "" {
			t.Fatalf("build %s: %s", tag, msg.Error)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := m.Remove(ctx); err != nil {
			t.Logf("remove gateway: %v", err)
		}
		if _, err := cli.ImageRemove(ctx, tag, image.RemoveOptions{PruneChildren: true}); err != nil {
			t.Logf("remove %s: %v", tag, err)
		}
	})
	return tag
}
