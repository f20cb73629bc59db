package pipeline

import (
	"context"

	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

// volumeNodes returns the node each of the manifest's volumes is pinned
// to, recording this worker's node (where EnsureVolumes creates it) for a
// volume seen for the first time. The record comes before the volume, so
// a worker killed in between leaves a pin, never an unpinned volume.
func (r *run) volumeNodes(ctx context.Context) (map[string]string, error) {
	vols := r.rendered.Spec.Volumes
	if len(vols) == 0 {
		return nil, nil
	}
	pins, err := r.p.Store.VolumeNodes(ctx, r.d.TeamID, r.env.ID)
	if err != nil {
		return nil, err
	}
	var local *store.VolumeNode
	for _, v := range vols {
		if _, ok := pins[v.Name]; ok {
			continue
		}
		if local == nil {
			n, err := r.p.Driver.LocalNode(ctx)
			if err != nil {
				return nil, err
			}
			local = &store.VolumeNode{NodeID: n.ID, NodeName: n.Hostname}
		}
		pin := *local
		pin.Volume = v.Name
		if err := r.p.Store.PinVolumeNode(ctx, r.d.TeamID, r.env.ID, pin); err != nil {
			return nil, err
		}
	}
	if local != nil {
		// Another worker may have pinned one first: its pin wins.
		if pins, err = r.p.Store.VolumeNodes(ctx, r.d.TeamID, r.env.ID); err != nil {
			return nil, err
		}
	}
	out := make(map[string]string, len(pins))
	for name, p := range pins {
		out[name] = p.NodeID
	}
	return out, nil
}

// checkVolumeNodes fails with volume_node_unavailable before anything is
// built when a volume the manifest mounts is pinned to a node that cannot
// run tasks; plan checks again with the full desired state.
func (r *run) checkVolumeNodes(ctx context.Context) error {
	pins, err := r.p.Store.VolumeNodes(ctx, r.d.TeamID, r.env.ID)
	if err != nil || len(pins) == 0 {
		return err
	}
	var desired swarm.DesiredState
	for _, v := range r.rendered.Spec.Volumes {
		if p, ok := pins[v.Name]; ok {
			desired.Volumes = append(desired.Volumes, swarm.VolumeSpec{Volume: v.Name, Node: p.NodeID})
		}
	}
	return asFailure(r.p.Driver.CheckVolumeNodes(ctx, desired))
}
