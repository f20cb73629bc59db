package multinode_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"

	"github.com/slipwayhq/slipway/runtime/registry"
	"github.com/slipwayhq/slipway/runtime/registry/registrytest"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/test/chaos/chaostest"
	"github.com/slipwayhq/slipway/test/summary"
)

// privateImageOnEveryNode pushes an image to a registry that refuses
// anonymous pulls (on the host's switch address, plain HTTP, which the
// nodes trust), on no node any more: the stack's team, with its registry
// credentials, runs it with a task on each of the three nodes, each node
// pulling it with the credentials Swarm got with the service; another
// team, without credentials, is refused and never gets the first team's.
func privateImageOnEveryNode(t *testing.T, s *stack) {
	t.Helper()
	ctx := context.Background()
	c := s.c
	id := swarmtest.ID()
	reg := registrytest.Serve(t, c.HostIP+":0", "pw-"+id)
	base := swarmtest.Image(t, "web")
	c.LoadImage(t, base)
	node1 := c.Node(1).Client
	variant := registrytest.Variant(t, node1, base)
	ref := reg.Push(t, node1, variant, "private/web", "v1")
	if _, err := node1.ImageRemove(ctx, variant, image.RemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Nodes {
		if _, err := n.Client.ImageInspect(ctx, ref); err == nil {
			t.Fatalf("node %d already has %s: the test would not show it pulled", n.Index, ref)
		}
	}

	if _, err := s.api.SetRegistryCredential(ctx, reg.Host, registry.User, []byte(reg.Password)); err != nil {
		t.Fatal(err)
	}
	d, code, msg := s.deploy(t, imageManifest("private", ref, 3))
	if code != "" {
		t.Fatalf("private image deployment failed: %s: %s", code, msg)
	}
	web := s.serviceOf(t, d.EnvironmentID, "web")
	if img := web.Spec.TaskTemplate.ContainerSpec.Image; !strings.HasPrefix(img, ref+"@sha256:") {
		t.Fatalf("web runs %s, want %s pinned to its digest", img, ref)
	}
	chaostest.WaitFor(t, 2*time.Minute, "one running task of the private image on each node", func() bool {
		per := s.runningPerNode(t, web.ID)
		return len(per) == 3 && per[c.Node(1).Hostname] == 1 && per[c.Node(2).Hostname] == 1 && per[c.Node(3).Hostname] == 1
	})
	for _, n := range c.Nodes {
		if _, err := n.Client.ImageInspect(ctx, web.Spec.TaskTemplate.ContainerSpec.Image); err != nil {
			t.Fatalf("node %d runs web without having pulled %s: %v", n.Index, ref, err)
		}
	}

	// Another team, no credentials: refused, although the image is now on
	// every node and the first team's credentials are in the database.
	other := chaostest.NewTeam(t, s.st, swarmtest.ID())
	t.Cleanup(func() { swarmtest.RemoveAndCheck(t, c.Manager(), swarm.LabelTeam+"="+other.Team.ID) })
	_, code, msg = s.deployAs(t, other.Client(t, s.srv), imageManifest("intruder", ref, 1))
	if code != "image_unavailable" || !strings.Contains(msg, "does not let this team pull it") {
		t.Fatalf("another team deploying %s: %s %q, want image_unavailable saying the registry does not let this team pull it", ref, code, msg)
	}
	summary.Line(t, "multinode: a private image needing the team's registry credentials runs a task on each of 3 nodes (each pulled it); another team without credentials is refused: %s", msg)
}

// imageManifest is one image service with replicas.
func imageManifest(app, image string, replicas int) string {
	return fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[[spec.services]]
name = "web"
replicas = %d
[spec.services.source]
type = "image"
image = %q
`, app, replicas, image)
}
