package pipeline

import (
	"context"
	"errors"
	"strings"

	"github.com/slipwayhq/slipway/runtime/image"
	"github.com/slipwayhq/slipway/runtime/registry"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/secrets"
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
	t, err := r.target(ctx)
	if err != nil || !t.Enabled() {
		return imageID, err // retried: the embedded registry may be starting
	}
	ref, err := r.p.Registry.Push(ctx, t, imageID, t.Repository(r.d.TeamID, r.app.Name, service))
	var re *registry.Error
	if errors.As(err, &re) {
		return "", fail(re.Code, "service %s: %s", service, re.Message)
	}
	return ref, err
}

// target is where built images go; a disabled Target without a registry.
func (r *run) target(ctx context.Context) (registry.Target, error) {
	if r.p.Registry == nil {
		return registry.Target{}, nil
	}
	return r.p.Registry.Target(ctx)
}

// resolveImage pins an image-sourced service's image with the team's own
// access to its registry: the team's credentials for that host, if it has
// any, and a check at the registry whenever images there may be private.
// An image under Slipway's own registry is the team's only under its own
// repositories: others' builds are refused, never pulled with Slipway's
// account.
func (r *run) resolveImage(ctx context.Context, ref string) (image.Resolved, error) {
	t, err := r.target(ctx)
	if err != nil {
		return image.Resolved{}, err
	}
	if t.Enabled() && strings.HasPrefix(ref, t.Host+"/") && !strings.HasPrefix(ref, t.TeamPrefix(r.d.TeamID)) {
		return image.Resolved{}, &image.Error{Code: image.CodeUnavailable, Reference: ref,
			Message: "Slipway's own registry holds the images other teams built; name an image of your own registry or build it from source"}
	}
	a, err := r.access(ctx, ref)
	if err != nil {
		return image.Resolved{}, err
	}
	return r.p.Images.Resolve(ctx, ref, a)
}

// access is the team's access to the registry of ref.
func (r *run) access(ctx context.Context, ref string) (image.Access, error) {
	auth, err := r.teamAuth(ctx, ref)
	if err != nil || auth != "" {
		return image.Access{Auth: auth, Verify: true}, err
	}
	host, err := secrets.ImageRegistryHost(ref)
	if err != nil {
		return image.Access{}, nil // not a registry reference: the resolver says so
	}
	private, err := r.p.Store.RegistryHostHasCredentials(ctx, host)
	return image.Access{Verify: private}, err
}

// teamAuth is the X-Registry-Auth value of the team's account on the
// registry of ref, "" when it has none there. Only the deployment's own
// team's accounts are looked at; each is opened once per run.
func (r *run) teamAuth(ctx context.Context, ref string) (string, error) {
	if r.p.Logins == nil {
		return "", nil
	}
	host, err := secrets.ImageRegistryHost(ref)
	if err != nil {
		return "", nil
	}
	if auth, ok := r.auths[host]; ok {
		return auth, nil
	}
	login, ok, err := r.p.Logins.RegistryLogin(ctx, r.d.TeamID, ref)
	if err != nil {
		var se *secrets.Error
		if errors.As(err, &se) {
			return "", fail(se.Code, "%s", se.Message)
		}
		return "", err
	}
	auth := ""
	if ok {
		auth = registry.EncodeAuth(login.Host, login.Username, login.Password)
	}
	if r.auths == nil {
		r.auths = map[string]string{}
	}
	r.auths[host] = auth
	return auth, nil
}

// attachRegistryAuth gives Swarm, with each service and job it creates or
// updates, the credentials of the registry its image comes from, so every
// node can pull it (docker service create --with-registry-auth): Slipway's
// own registry's for the images it pushed, the team's own account for
// any other registry it has one for.
func (r *run) attachRegistryAuth(ctx context.Context, desired *swarm.DesiredState) error {
	t, err := r.target(ctx)
	if err != nil {
		return err
	}
	auth := func(image string) (string, error) {
		if t.Enabled() && strings.HasPrefix(image, t.Host+"/") {
			return t.Auth(), nil
		}
		return r.teamAuth(ctx, image)
	}
	for i := range desired.Services {
		if desired.Services[i].RegistryAuth, err = auth(desired.Services[i].Spec.TaskTemplate.ContainerSpec.Image); err != nil {
			return err
		}
	}
	for i := range desired.Jobs {
		if desired.Jobs[i].RegistryAuth, err = auth(desired.Jobs[i].Spec.TaskTemplate.ContainerSpec.Image); err != nil {
			return err
		}
	}
	return nil
}
