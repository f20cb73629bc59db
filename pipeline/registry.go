package pipeline

import (
	"context"
	"errors"
	"strings"

	"github.com/slipwayhq/slipway/runtime/registry"
	"github.com/slipwayhq/slipway/runtime/swarm"
)

// ImageRegistry is where built (and local-only) images go so that every
// node of the Swarm can pull them (runtime/registry.Provider). Nil, or a
// disabled Target, keeps local image IDs: right on a one-node Swarm only.
type ImageRegistry interface {
	Target(ctx context.Context) (registry.Target, error)
	Push(ctx context.Context, t registry.Target, imageID, repo string) (string, error)
}

// publish pushes a local image (a build, or an image-sourced service's
// image that no registry holds) to the registry and returns the
// digest-pinned reference the service runs; without a registry it returns
// the image ID, as before.
func (r *run) publish(ctx context.Context, service, imageID string) (string, error) {
	if r.p.Registry == nil {
		return imageID, nil
	}
	t, err := r.p.Registry.Target(ctx)
	if err != nil {
		return "", err // retried: the embedded registry may be starting
	}
	if !t.Enabled() {
		return imageID, nil
	}
	ref, err := r.p.Registry.Push(ctx, t, imageID, t.Repository(r.d.TeamID, r.app.Name, service))
	var re *registry.Error
	if errors.As(err, &re) {
		return "", fail(re.Code, "service %s: %s", service, re.Message)
	}
	return ref, err
}

// attachRegistryAuth gives Swarm, with each service and job it creates or
// updates, the credentials of the registry their image comes from, so
// every node can pull it (docker service create --with-registry-auth).
func (r *run) attachRegistryAuth(ctx context.Context, desired *swarm.DesiredState) error {
	if r.p.Registry == nil {
		return nil
	}
	t, err := r.p.Registry.Target(ctx)
	if err != nil {
		return err
	}
	if !t.Enabled() {
		return nil
	}
	auth := func(image string) string {
		if strings.HasPrefix(image, t.Host+"/") {
			return t.Auth()
		}
		return ""
	}
	for i := range desired.Services {
		desired.Services[i].RegistryAuth = auth(desired.Services[i].Spec.TaskTemplate.ContainerSpec.Image)
	}
	for i := range desired.Jobs {
		desired.Jobs[i].RegistryAuth = auth(desired.Jobs[i].Spec.TaskTemplate.ContainerSpec.Image)
	}
	return nil
}
