package multinode_test

import (
	"testing"
	"time"

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
	chaostest.WaitFor(t, time.Minute, "one running task of web on each node", func() bool {
		per := s.runningPerNode(t, web.ID)
		return len(per) == 3 && per[c.Node(1).Hostname] == 1 && per[c.Node(2).Hostname] == 1 && per[c.Node(3).Hostname] == 1
	})
	if bad := s.noSuchImage(t, web.ID); len(bad) > 0 {
		t.Fatalf("tasks rejected for lack of the image: %q", bad)
	}
	summary.Line(t, "multinode: a git-built service with 3 replicas runs one task on each of 3 nodes (image %s), no No such image rejection", web.Spec.TaskTemplate.ContainerSpec.Image)
}
