package swarm

import (
	"context"

	"github.com/docker/docker/api/types/swarm"
)

// RestartService replaces every task of the environment's service named
// service in the manifest with a new container of the same spec, as its
// rollout settings order (one at a time, start-first or stop-first): a
// forced rolling update. It does not wait; Swarm carries it out. A
// service the environment does not run is service_not_running.
func (d *Driver) RestartService(ctx context.Context, env EnvRef, service string) error {
	name := ServiceName(env.ShortID, service)
	svc, found, err := d.inspect(ctx, name, env.ID)
	if err != nil {
		return err
	}
	if !found || svc.Spec.Labels[LabelService] != service || svc.Spec.Labels[LabelJob] != "" {
		return &Error{Code: CodeServiceNotRunning, Object: "service " + service, Message: "the environment runs no such service"}
	}
	spec := svc.Spec
	spec.TaskTemplate.ForceUpdate++
	if _, err := d.engine.ServiceUpdate(ctx, svc.ID, svc.Version, spec, swarm.ServiceUpdateOptions{}); err != nil {
		return engineErr("restart service "+name, err)
	}
	d.log.InfoContext(ctx, "service restarted", "service", name)
	return nil
}
