package multinode_test

import (
	"context"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/swarm"

	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/test/multinode/harness"
	"github.com/slipwayhq/slipway/test/summary"
)

// TestCluster_ThreeNodesSpreadAService checks the harness itself: three
// Ready nodes with distinct engines, and a 3-replica service whose image
// every node holds runs one task per node.
func TestCluster_ThreeNodesSpreadAService(t *testing.T) {
	c := harness.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nodes, err := c.Manager().NodeList(ctx, swarm.NodeListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 3 {
		t.Fatalf("%d nodes, want 3", len(nodes))
	}
	ids := map[string]bool{}
	for _, n := range c.Nodes {
		info, err := n.Client.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.Name != n.Hostname {
			t.Errorf("node %d is called %q, want %q", n.Index, info.Name, n.Hostname)
		}
		ids[info.ID] = true
	}
	if len(ids) != 3 {
		t.Fatalf("engine IDs %v: the nodes share an engine key", ids)
	}
	img := swarmtest.Image(t, "web")
	c.LoadImage(t, img)
	three := uint64(3)
	resp, err := c.Manager().ServiceCreate(ctx, swarm.ServiceSpec{
		Annotations:  swarm.Annotations{Name: "harness-spread"},
		TaskTemplate: swarm.TaskSpec{ContainerSpec: &swarm.ContainerSpec{Image: img}},
		Mode:         swarm.ServiceMode{Replicated: &swarm.ReplicatedService{Replicas: &three}},
		EndpointSpec: &swarm.EndpointSpec{Mode: swarm.ResolutionModeDNSRR},
	}, swarm.ServiceCreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Manager().ServiceRemove(context.Background(), resp.ID) })
	perNode := map[string]int{}
	for {
		tasks, err := c.Manager().TaskList(ctx, swarm.TaskListOptions{Filters: filters.NewArgs(filters.Arg("service", resp.ID), filters.Arg("desired-state", "running"))})
		if err != nil {
			t.Fatal(err)
		}
		clear(perNode)
		for _, task := range tasks {
			if task.Status.State == swarm.TaskStateRunning {
				perNode[task.NodeID]++
			}
		}
		if len(perNode) == 3 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("tasks per node %v, want one on each of 3 nodes", perNode)
		}
		time.Sleep(300 * time.Millisecond)
	}
	summary.Line(t, "multinode: 3 nodes Ready in %s; a 3-replica service runs one task per node", c.Ready.Round(100*time.Millisecond))
}
