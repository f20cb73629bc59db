package swarm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
)

// TestDriver_Nodes lists the real Swarm's nodes: the host's engine is one,
// with its hostname, role, state, engine version and resources, and only
// dev.slipway.* labels.
func TestDriver_Nodes(t *testing.T) {
	t.Parallel()
	cli := swarmtest.Client(t)
	info, err := cli.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := swarm.NewDriver(cli, nil).Nodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var me *swarm.NodeInfo
	for i := range nodes {
		if nodes[i].ID == info.Swarm.NodeID {
			me = &nodes[i]
		}
	}
	if me == nil {
		t.Fatalf("nodes %+v lack this engine's node %s", nodes, info.Swarm.NodeID)
	}
	if me.Hostname != info.Name || me.Role != "manager" || me.State != "ready" || me.EngineVersion != info.ServerVersion ||
		me.NanoCPUs <= 0 || me.MemoryBytes <= 0 {
		t.Fatalf("this node: %+v (engine %s %s)", *me, info.Name, info.ServerVersion)
	}
	for k := range me.Labels {
		if !strings.HasPrefix(k, swarm.NodeLabelPrefix) {
			t.Fatalf("label %q is not Slipway's", k)
		}
	}
}
