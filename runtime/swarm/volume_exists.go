package swarm

import (
	"context"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
)

// VolumeExists tells whether a volume of exactly that name exists, labelled
// or not, so deleting a preview can check its inventory is gone.
func (d *Driver) VolumeExists(ctx context.Context, name string) (bool, error) {
	list, err := d.engine.VolumeList(ctx, volume.ListOptions{Filters: filters.NewArgs(filters.Arg("name", name))})
	if err != nil {
		return false, engineErr("list volumes", err)
	}
	for _, v := range list.Volumes {
		if v.Name == name {
			return true, nil
		}
	}
	return false, nil
}
