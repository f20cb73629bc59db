package swarm

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/api/types/system"
)

// CodeVolumeNodeUnavailable: a volume's node is drained, paused or down,
// so the services mounting it cannot run (and are never started elsewhere
// on an empty volume).
const CodeVolumeNodeUnavailable = "volume_node_unavailable"

// nodeEngine is what pinning volumes needs beyond Engine (the real client
// has it; logic-test fakes need not).
type nodeEngine interface {
	Info(ctx context.Context) (system.Info, error)
	NodeInspectWithRaw(ctx context.Context, nodeID string) (swarm.Node, []byte, error)
	NodeList(ctx context.Context, options swarm.NodeListOptions) ([]swarm.Node, error)
}

// Node is a Swarm node as pinning reports it.
type Node struct {
	ID, Hostname string
}

// LocalNode is the node of the engine the driver talks to: where a volume
// it creates lives.
func (d *Driver) LocalNode(ctx context.Context) (Node, error) {
	ne, ok := d.engine.(nodeEngine)
	if !ok {
		return Node{}, errors.New("swarm: this engine cannot tell its node")
	}
	info, err := ne.Info(ctx)
	if err != nil {
		return Node{}, engineErr("engine info", err)
	}
	if info.Swarm.NodeID == "" {
		return Node{}, &Error{Code: CodeInvalidInput, Object: "engine", Message: "the engine is not part of a Swarm"}
	}
	return Node{ID: info.Swarm.NodeID, Hostname: info.Name}, nil
}

// CheckVolumeNodes fails with volume_node_unavailable, naming the node,
// when the node of a pinned volume cannot run tasks (drained, paused,
// down or gone).
func (d *Driver) CheckVolumeNodes(ctx context.Context, desired DesiredState) error {
	ne, ok := d.engine.(nodeEngine)
	if !ok {
		return nil
	}
	checked := map[string]error{}
	for _, v := range desired.Volumes {
		if v.Node == "" {
			continue
		}
		if _, done := checked[v.Node]; done {
			continue
		}
		checked[v.Node] = nil
		n, _, err := ne.NodeInspectWithRaw(ctx, v.Node)
		switch {
		case err != nil && strings.Contains(strings.ToLower(err.Error()), "not found"):
			return &Error{Code: CodeVolumeNodeUnavailable, Object: "node " + v.Node,
				Message: fmt.Sprintf("volume %q lives on node %s, which has left the Swarm; Slipway never starts its services elsewhere on an empty volume: move the volume (docs/cluster.md)", v.Volume, v.Node)}
		case err != nil:
			return engineErr("inspect node "+v.Node, err)
		}
		why := ""
		switch {
		case n.Spec.Availability == swarm.NodeAvailabilityDrain:
			why = "drained"
		case n.Spec.Availability == swarm.NodeAvailabilityPause:
			why = "paused"
		case n.Status.State != swarm.NodeStateReady:
			why = string(n.Status.State)
		}
		if why != "" {
			return &Error{Code: CodeVolumeNodeUnavailable, Object: "node " + n.Description.Hostname,
				Message: fmt.Sprintf("volume %q lives on node %s (%s), which is %s; Slipway never starts its services elsewhere on an empty volume: make the node active again, or move the volume (docs/cluster.md)", v.Volume, n.Description.Hostname, n.ID, why)}
		}
	}
	return nil
}

// pinnedNodes are the node IDs a service's placement pins it to.
func pinnedNodes(svc swarm.Service) []string {
	var out []string
	if p := svc.Spec.TaskTemplate.Placement; p != nil {
		for _, c := range p.Constraints {
			if id, ok := strings.CutPrefix(c, "node.id=="); ok {
				out = append(out, id)
			}
		}
	}
	return out
}

// unavailableNodes lists, with one node listing, the nodes services are
// pinned to that cannot run tasks.
func (d *Driver) unavailableNodes(ctx context.Context, services []swarm.Service) (map[string]string, error) {
	ne, ok := d.engine.(nodeEngine)
	pinned := false
	for _, s := range services {
		pinned = pinned || len(pinnedNodes(s)) > 0
	}
	if !ok || !pinned {
		return nil, nil
	}
	nodes, err := ne.NodeList(ctx, swarm.NodeListOptions{})
	if err != nil {
		return nil, engineErr("list nodes", err)
	}
	out := map[string]string{}
	known := map[string]bool{}
	for _, n := range nodes {
		known[n.ID] = true
		switch {
		case n.Spec.Availability == swarm.NodeAvailabilityDrain, n.Spec.Availability == swarm.NodeAvailabilityPause:
			out[n.ID] = fmt.Sprintf("node %s is %s", n.Description.Hostname, n.Spec.Availability)
		case n.Status.State != swarm.NodeStateReady:
			out[n.ID] = fmt.Sprintf("node %s is %s", n.Description.Hostname, n.Status.State)
		}
	}
	for _, s := range services {
		for _, id := range pinnedNodes(s) {
			if !known[id] {
				out[id] = fmt.Sprintf("node %s has left the Swarm", id)
			}
		}
	}
	return out, nil
}

// volumeNodeReason is why a pinned service cannot run, or "".
func volumeNodeReason(svc swarm.Service, unavailable map[string]string) string {
	for _, id := range pinnedNodes(svc) {
		if why := unavailable[id]; why != "" {
			return CodeVolumeNodeUnavailable + ": " + why + ", and it holds the volumes this service mounts; Slipway never starts it elsewhere on an empty volume"
		}
	}
	return ""
}
