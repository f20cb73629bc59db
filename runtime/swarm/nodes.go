package swarm

import (
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/docker/docker/api/types/swarm"
)

// Node labels operators set (docker node update --label-add) to tell
// Slipway what a node is for.
const (
	// NodeLabelPrefix starts every label Slipway reads on nodes.
	NodeLabelPrefix = "dev.slipway."
	// NodeLabelIngress marks the nodes a gateway runs on, publishing 80
	// and 443 (dev.slipway.ingress=true).
	NodeLabelIngress = "dev.slipway.ingress"
	// NodeLabelBuilds marks the managers workers (and so builds) run on
	// (dev.slipway.builds=true; the stack file places workers by it).
	NodeLabelBuilds = "dev.slipway.builds"
)

// NodeInfo is one Swarm node as operators see it.
type NodeInfo struct {
	ID       string
	Hostname string
	// Role is "manager" or "worker"; Leader marks the Raft leader.
	Role   string
	Leader bool
	// Availability is active, pause or drain; State is ready, down,
	// disconnected or unknown.
	Availability  string
	State         string
	Address       string
	EngineVersion string
	NanoCPUs      int64
	MemoryBytes   int64
	// Labels are the node's dev.slipway.* labels.
	Labels map[string]string
}

// Nodes lists the Swarm's nodes, by hostname. It needs a manager's engine.
func (d *Driver) Nodes(ctx context.Context) ([]NodeInfo, error) {
	ne, ok := d.engine.(nodeEngine)
	if !ok {
		return nil, errors.New("swarm: this engine cannot list nodes")
	}
	list, err := ne.NodeList(ctx, swarm.NodeListOptions{})
	if err != nil {
		return nil, engineErr("list nodes", err)
	}
	out := make([]NodeInfo, 0, len(list))
	for _, n := range list {
		out = append(out, nodeInfo(n))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Hostname < out[j].Hostname })
	return out, nil
}

func nodeInfo(n swarm.Node) NodeInfo {
	info := NodeInfo{
		ID: n.ID, Hostname: n.Description.Hostname, Role: string(n.Spec.Role),
		Availability: string(n.Spec.Availability), State: string(n.Status.State), Address: n.Status.Addr,
		EngineVersion: n.Description.Engine.EngineVersion,
		NanoCPUs:      n.Description.Resources.NanoCPUs, MemoryBytes: n.Description.Resources.MemoryBytes,
		Labels: map[string]string{},
	}
	if n.ManagerStatus != nil {
		info.Leader = n.ManagerStatus.Leader
	}
	for k, v := range n.Spec.Labels {
		if strings.HasPrefix(k, NodeLabelPrefix) {
			info.Labels[k] = v
		}
	}
	return info
}
