package build

import (
	"context"
	"errors"
	"fmt"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/swarm"
)

// RemoveUnusedImages removes the images this installation built (labelled
// dev.slipway.built=true and with its installation label) that are not in
// keep (image IDs, with or without "sha256:") and that no container, running
// or stopped, and no Swarm service uses. It returns the removed image IDs.
// The daemon refuses to remove an image a container uses, so a container
// created meanwhile keeps its image.
func (b *Builder) RemoveUnusedImages(ctx context.Context, keep map[string]bool) ([]string, error) {
	// Top-level images only: the classic builder's intermediate images carry
	// the build's labels too, and go with their image (PruneChildren).
	images, err := b.Engine.ImageList(ctx, image.ListOptions{Filters: filters.NewArgs(
		filters.Arg("label", LabelBuilt+"=true"),
		filters.Arg("label", LabelInstallation+"="+b.Installation),
	)})
	if err != nil {
		return nil, fmt.Errorf("list built images: %w", err)
	}
	if len(images) == 0 {
		return nil, nil
	}
	used, err := b.usedImages(ctx)
	if err != nil {
		return nil, err
	}
	kept := make(map[string]bool, len(keep))
	for id, ok := range keep {
		if ok {
			kept[fullImageID(id)] = true
		}
	}
	var removed []string
	var errs []error
	for _, img := range images {
		if kept[img.ID] || used[img.ID] {
			continue
		}
		gone, err := b.removeImage(ctx, img)
		if err != nil {
			// An image another image is built FROM stays while its child does.
			if !cerrdefs.IsConflict(err) {
				errs = append(errs, err)
			}
			continue
		}
		if gone {
			removed = append(removed, img.ID)
		}
	}
	return removed, errors.Join(errs...)
}

func fullImageID(id string) string {
	if strings.HasPrefix(id, "sha256:") {
		return id
	}
	return "sha256:" + id
}

// usedImages returns the IDs of images containers or services use.
func (b *Builder) usedImages(ctx context.Context) (map[string]bool, error) {
	used := make(map[string]bool)
	containers, err := b.Engine.ContainerList(ctx, container.ListOptions{All: true})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	for _, c := range containers {
		used[c.ImageID] = true
	}
	services, err := b.Engine.ServiceList(ctx, swarm.ServiceListOptions{})
	if err != nil && !cerrdefs.IsUnavailable(err) {
		return nil, fmt.Errorf("list services: %w", err)
	}
	for _, s := range services {
		if s.Spec.TaskTemplate.ContainerSpec == nil || s.Spec.TaskTemplate.ContainerSpec.Image == "" {
			continue
		}
		ref := s.Spec.TaskTemplate.ContainerSpec.Image
		inspect, err := b.Engine.ImageInspect(ctx, ref)
		if cerrdefs.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("inspect image %s of service %s: %w", ref, s.Spec.Name, err)
		}
		used[inspect.ID] = true
	}
	return used, nil
}

// removeImage untags the image first: removing an ID with several tags
// would need force, and force would also remove images stopped containers
// use.
// It reports whether the image is gone.
func (b *Builder) removeImage(ctx context.Context, img image.Summary) (bool, error) {
	for _, tag := range img.RepoTags {
		if tag == "<none>:<none>" {
			continue
		}
		resp, err := b.Engine.ImageRemove(ctx, tag, image.RemoveOptions{PruneChildren: true})
		if cerrdefs.IsNotFound(err) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("untag image %s: %w", tag, err)
		}
		for _, r := range resp {
			if r.Deleted == img.ID {
				return true, nil // that was its last tag
			}
		}
	}
	_, err := b.Engine.ImageRemove(ctx, img.ID, image.RemoveOptions{PruneChildren: true})
	if cerrdefs.IsNotFound(err) {
		return false, nil // removed concurrently, by someone else
	}
	if err != nil {
		return false, fmt.Errorf("remove image %s: %w", img.ID, err)
	}
	return true, nil
}
