package multinode_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	dockerswarm "github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/api/types/volume"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/test/chaos/chaostest"
	"github.com/slipwayhq/slipway/test/multinode/harness"
	"github.com/slipwayhq/slipway/test/summary"
)

// TestSlipway_OnThreeNodes runs Slipway (serve on node 2, worker on node
// 1) against the 3-node Swarm, one scenario after another on the same
// stack.
func TestSlipway_OnThreeNodes(t *testing.T) {
	c := harness.Shared(t)
	s := startStack(t, c)
	repo := gitRepo(t)

	// A git-built service with 3 replicas: built on node 1, pushed to the
	// embedded registry (on node 3), pulled by every node.
	d, code, msg := s.deploy(t, gitManifest("spread", repo, 3))
	if code != "" {
		t.Fatalf("git-built deployment failed: %s: %s", code, msg)
	}
	web := s.serviceOf(t, d.EnvironmentID, "web")
	s.waitOneTaskPerNode(t, web.ID)
	summary.Line(t, "multinode: a git-built service with 3 replicas runs one task on each of 3 nodes (image %s), no No such image rejection", web.Spec.TaskTemplate.ContainerSpec.Image)

	privateImageOnEveryNode(t, s)

	gatewaysOnIngressNodes(t, s)

	// A volume service is pinned to the node its volume was created on:
	// the worker's, node 1.
	worker := c.Node(1)
	img := swarmtest.Image(t, "web")
	c.LoadImage(t, img)
	vd, code, msg := s.deploy(t, volumeManifest("data", img))
	if code != "" {
		t.Fatalf("volume deployment failed: %s: %s", code, msg)
	}
	data := s.serviceOf(t, vd.EnvironmentID, "db")
	if p := data.Spec.TaskTemplate.Placement; p == nil || !slices.Contains(p.Constraints, "node.id=="+worker.ID) {
		t.Fatalf("db placement %+v, want node.id==%s (node 1, where its volume was created)", p, worker.ID)
	}
	chaostest.WaitFor(t, time.Minute, "db running on node 1", func() bool {
		per := s.runningPerNode(t, data.ID)
		return len(per) == 1 && per[worker.Hostname] == 1
	})

	// Draining node 1: db stops and is never started elsewhere; the
	// environment's status and a new deployment say volume_node_unavailable,
	// naming node 1. The spread service moves to nodes 2 and 3, whose
	// engines pull its image from the registry on node 3: the deployment
	// survives its worker's node being drained.
	updateNode(t, c, worker, func(spec *dockerswarm.NodeSpec) { spec.Availability = dockerswarm.NodeAvailabilityDrain })
	t.Cleanup(func() {
		updateNode(t, c, worker, func(spec *dockerswarm.NodeSpec) { spec.Availability = dockerswarm.NodeAvailabilityActive })
	})
	chaostest.WaitFor(t, 2*time.Minute, "web running 3 replicas on nodes 2 and 3", func() bool {
		per := s.runningPerNode(t, web.ID)
		return per[worker.Hostname] == 0 && per[c.Node(2).Hostname]+per[c.Node(3).Hostname] == 3
	})
	if bad := s.noSuchImage(t, web.ID); len(bad) > 0 {
		t.Fatalf("after draining node 1, tasks rejected for lack of the image: %q", bad)
	}
	chaostest.WaitFor(t, time.Minute, "db's task on node 1 to stop", func() bool { return len(s.runningPerNode(t, data.ID)) == 0 })
	status, err := s.api.Status(context.Background(), "data", "production")
	if err != nil {
		t.Fatal(err)
	}
	if got := dbError(status); !strings.Contains(got, "volume_node_unavailable") || !strings.Contains(got, worker.Hostname) {
		t.Fatalf("status of db with node 1 drained: %q, want volume_node_unavailable naming %s", got, worker.Hostname)
	}
	_, code, msg = s.deploy(t, volumeManifest("data", img)+"\n[spec.services.environment]\nV = \"2\"\n")
	if code != "volume_node_unavailable" || !strings.Contains(msg, worker.Hostname) {
		t.Fatalf("deploying db with node 1 drained: %s %q, want volume_node_unavailable naming %s", code, msg, worker.Hostname)
	}
	for _, task := range s.tasks(t, data.ID) {
		if task.NodeID != worker.ID && task.Status.State == dockerswarm.TaskStateRunning {
			t.Fatalf("db ran on %s, away from its volume's node", s.c.NodeByID(task.NodeID).Hostname)
		}
	}
	for _, n := range c.Nodes[1:] {
		vols, err := n.Client.VolumeList(context.Background(), volume.ListOptions{Filters: filters.NewArgs(filters.Arg("label", swarm.LabelEnv+"="+vd.EnvironmentID))})
		if err != nil {
			t.Fatal(err)
		}
		if len(vols.Volumes) > 0 {
			t.Fatalf("node %d holds a volume of the environment: db started there on an empty volume", n.Index)
		}
	}
	summary.Line(t, "multinode: a volume service stays on its node; with that node drained the deploy and the status say volume_node_unavailable naming it, and it never starts elsewhere; the git-built service survives its worker's node drained (3 replicas on the other nodes)")
}

// dbError is the db service's last error in the status.
func dbError(st api.ApplicationStatus) string {
	for _, e := range st.Environments {
		for _, svc := range e.Services {
			if svc.Service == "db" {
				return svc.LastError
			}
		}
	}
	return ""
}

// volumeManifest is one image service mounting a volume.
func volumeManifest(app, image string) string {
	return fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[[spec.volumes]]
name = "data"

[[spec.services]]
name = "db"
[spec.services.source]
type = "image"
image = %q
[[spec.services.mounts]]
volume = "data"
target = "/data"
`, app, image)
}
