package swarm

import (
	"context"
	"fmt"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/api/types/volume"
)

// pollInterval paces every wait on Swarm: often enough that a converged
// service is noticed within half a second, rarely enough to cost little.
const pollInterval = 500 * time.Millisecond

// EnsureNetworks creates the desired networks that do not exist yet: one
// attachable overlay per environment (and the ingress overlay).
func (d *Driver) EnsureNetworks(ctx context.Context, desired DesiredState) error {
	if len(desired.Networks) == 0 {
		return nil
	}
	list, err := d.engine.NetworkList(ctx, network.ListOptions{Filters: namePrefixes(desired.Networks, func(n NetworkSpec) string { return n.Name })})
	if err != nil {
		return engineErr("list networks", err)
	}
	for _, want := range desired.Networks {
		var found bool
		for _, n := range list {
			if n.Name == want.Name {
				if !ownedBy(n.Labels, desired.EnvID) {
					return foreignErr(KindNetwork, want.Name)
				}
				found = true
			}
		}
		if found {
			continue
		}
		_, err := d.engine.NetworkCreate(ctx, want.Name, network.CreateOptions{
			Driver:     "overlay",
			Scope:      "swarm",
			Attachable: true,
			Labels:     want.Labels,
		})
		if err != nil {
			return engineErr("create network "+want.Name, err)
		}
		d.log.InfoContext(ctx, "network created", "network", want.Name)
	}
	return nil
}

// EnsureVolumes creates the desired named local volumes that are missing
// on this engine's node. A volume pinned to another node is left to that
// node (the engine cannot see it from here).
func (d *Driver) EnsureVolumes(ctx context.Context, desired DesiredState) error {
	local := ""
	for _, want := range desired.Volumes {
		if want.Node != "" && local == "" {
			n, err := d.LocalNode(ctx)
			if err != nil {
				return err
			}
			local = n.ID
		}
		if want.Node != "" && want.Node != local {
			continue
		}
		list, err := d.engine.VolumeList(ctx, volume.ListOptions{Filters: filters.NewArgs(filters.Arg("name", want.Name))})
		if err != nil {
			return engineErr("list volumes", err)
		}
		var found bool
		for _, v := range list.Volumes {
			if v.Name == want.Name {
				if !ownedBy(v.Labels, desired.EnvID) {
					return foreignErr(KindVolume, want.Name)
				}
				found = true
			}
		}
		if found {
			continue
		}
		if _, err := d.engine.VolumeCreate(ctx, volume.CreateOptions{Name: want.Name, Driver: "local", Labels: want.Labels}); err != nil {
			return engineErr("create volume "+want.Name, err)
		}
		d.log.InfoContext(ctx, "volume created", "volume", want.Name)
	}
	return nil
}

// EnsureConfigs creates the desired configs that are missing. Configs are
// content-named, so an existing one already holds the desired bytes.
func (d *Driver) EnsureConfigs(ctx context.Context, desired DesiredState) error {
	if len(desired.Configs) == 0 {
		return nil
	}
	list, err := d.engine.ConfigList(ctx, swarm.ConfigListOptions{Filters: filters.NewArgs(filters.Arg("label", LabelEnv+"="+desired.EnvID))})
	if err != nil {
		return engineErr("list configs", err)
	}
	have := map[string]bool{}
	for _, c := range list {
		have[c.Spec.Name] = ownedBy(c.Spec.Labels, desired.EnvID)
	}
	for _, want := range desired.Configs {
		if have[want.Name] {
			continue
		}
		if _, err := d.engine.ConfigCreate(ctx, want); err != nil {
			if cerrdefs.IsConflict(err) || cerrdefs.IsAlreadyExists(err) {
				return foreignErr(KindConfig, want.Name)
			}
			return engineErr("create config "+want.Name, err)
		}
	}
	return nil
}

// EnsureSecrets creates the desired secrets that are missing; like
// configs they are content-named and immutable.
func (d *Driver) EnsureSecrets(ctx context.Context, desired DesiredState) error {
	if len(desired.Secrets) == 0 {
		return nil
	}
	list, err := d.engine.SecretList(ctx, swarm.SecretListOptions{Filters: filters.NewArgs(filters.Arg("label", LabelEnv+"="+desired.EnvID))})
	if err != nil {
		return engineErr("list secrets", err)
	}
	have := map[string]bool{}
	for _, s := range list {
		have[s.Spec.Name] = ownedBy(s.Spec.Labels, desired.EnvID)
	}
	for _, want := range desired.Secrets {
		if have[want.Name] {
			continue
		}
		if _, err := d.engine.SecretCreate(ctx, want); err != nil {
			if cerrdefs.IsConflict(err) || cerrdefs.IsAlreadyExists(err) {
				return foreignErr(KindSecret, want.Name)
			}
			return engineErr("create secret "+want.Name, err)
		}
	}
	return nil
}

func foreignErr(kind Kind, name string) error {
	return &Error{Code: CodeNameConflict, Object: fmt.Sprintf("%s %s", kind, name),
		Message: "an object with this name exists without Slipway's labels for this environment; Slipway never adopts or removes it: rename or remove it yourself"}
}

func namePrefixes[T any](items []T, name func(T) string) filters.Args {
	f := filters.NewArgs()
	for _, it := range items {
		f.Add("name", name(it))
	}
	return f
}

// inspect returns the service with the given name, checking it belongs to
// envID. found is false when no such service exists.
func (d *Driver) inspect(ctx context.Context, name, envID string) (svc swarm.Service, found bool, err error) {
	svc, _, err = d.engine.ServiceInspectWithRaw(ctx, name, swarm.ServiceInspectOptions{})
	if cerrdefs.IsNotFound(err) {
		return swarm.Service{}, false, nil
	}
	if err != nil {
		return swarm.Service{}, false, engineErr("inspect service "+name, err)
	}
	// Inspect also matches ID prefixes; only an exact name is ours.
	if svc.Spec.Name != name {
		return swarm.Service{}, false, nil
	}
	if !ownedBy(svc.Spec.Labels, envID) {
		return swarm.Service{}, false, foreignErr(KindService, name)
	}
	return svc, true, nil
}

// UpdateService creates the service, or updates it (sending its Version)
// when any field differs; an unchanged service is left alone (changed is
// false), so resuming a deployment does not restart it and an unchanged,
// converged dependency need not delay its dependents. It does not wait:
// see WaitConverged.
func (d *Driver) UpdateService(ctx context.Context, want ServiceSpec) (changed bool, err error) {
	envID := want.Spec.Labels[LabelEnv]
	spec, err := d.resolveRefs(ctx, want.Spec)
	if err != nil {
		return false, err
	}
	have, found, err := d.inspect(ctx, spec.Name, envID)
	if err != nil {
		return false, err
	}
	if !found {
		if _, err := d.engine.ServiceCreate(ctx, spec, swarm.ServiceCreateOptions{EncodedRegistryAuth: want.RegistryAuth}); err != nil {
			return false, engineErr("create service "+spec.Name, err)
		}
		d.log.InfoContext(ctx, "service created", "service", spec.Name)
		return true, nil
	}
	nets, err := d.engine.NetworkList(ctx, network.ListOptions{Filters: filters.NewArgs(filters.Arg("label", LabelEnv+"="+envID))})
	if err != nil {
		return false, engineErr("list networks", err)
	}
	netNames := map[string]string{}
	for _, n := range nets {
		netNames[n.ID] = n.Name
	}
	if len(ServiceDrift(have.Spec, spec, netNames)) == 0 {
		return false, nil
	}
	// A restart's counter stays as it is, so an update does not look like
	// a second restart request.
	spec.TaskTemplate.ForceUpdate = have.Spec.TaskTemplate.ForceUpdate
	if _, err := d.engine.ServiceUpdate(ctx, have.ID, have.Version, spec, swarm.ServiceUpdateOptions{EncodedRegistryAuth: want.RegistryAuth}); err != nil {
		return false, engineErr("update service "+spec.Name, err)
	}
	d.log.InfoContext(ctx, "service updated", "service", spec.Name)
	return true, nil
}

// resolveRefs fills the config and secret IDs Swarm requires next to
// their names, with one list call each.
func (d *Driver) resolveRefs(ctx context.Context, spec swarm.ServiceSpec) (swarm.ServiceSpec, error) {
	cs := spec.TaskTemplate.ContainerSpec
	if cs == nil || len(cs.Configs) == 0 && len(cs.Secrets) == 0 {
		return spec, nil
	}
	envID := spec.Labels[LabelEnv]
	copied := *cs
	if len(cs.Configs) > 0 {
		list, err := d.engine.ConfigList(ctx, swarm.ConfigListOptions{Filters: filters.NewArgs(filters.Arg("label", LabelEnv+"="+envID))})
		if err != nil {
			return spec, engineErr("list configs", err)
		}
		ids := map[string]string{}
		for _, c := range list {
			ids[c.Spec.Name] = c.ID
		}
		copied.Configs = nil
		for _, r := range cs.Configs {
			ref := *r
			if ref.ConfigID = ids[r.ConfigName]; ref.ConfigID == "" {
				return spec, &Error{Code: CodeInvalidInput, Object: "config " + r.ConfigName, Message: "does not exist; EnsureConfigs must run first"}
			}
			copied.Configs = append(copied.Configs, &ref)
		}
	}
	if len(cs.Secrets) > 0 {
		list, err := d.engine.SecretList(ctx, swarm.SecretListOptions{Filters: filters.NewArgs(filters.Arg("label", LabelEnv+"="+envID))})
		if err != nil {
			return spec, engineErr("list secrets", err)
		}
		ids := map[string]string{}
		for _, s := range list {
			ids[s.Spec.Name] = s.ID
		}
		copied.Secrets = nil
		for _, r := range cs.Secrets {
			ref := *r
			if ref.SecretID = ids[r.SecretName]; ref.SecretID == "" {
				return spec, &Error{Code: CodeInvalidInput, Object: "secret " + r.SecretName, Message: "does not exist; EnsureSecrets must run first"}
			}
			copied.Secrets = append(copied.Secrets, &ref)
		}
	}
	spec.TaskTemplate.ContainerSpec = &copied
	return spec, nil
}

// Status is a service's observed state.
type Status struct {
	Desired   uint64
	Running   uint64
	Converged bool
	// Failed is set when Swarm gave up: a paused or rolled-back update, or
	// tasks failing again and again.
	Failed bool
	Reason string
	// fresh is set for a service Swarm created rather than updated: it has
	// no update monitor window to confirm that its tasks stay up.
	fresh      bool
	runningIDs []string
}

// updateStates says what each failed update state means.
var updateStates = map[swarm.UpdateState]string{
	swarm.UpdateStatePaused:            "Swarm paused the rollout",
	swarm.UpdateStateRollbackStarted:   "Swarm is rolling the rollout back",
	swarm.UpdateStateRollbackPaused:    "Swarm paused rolling the rollout back",
	swarm.UpdateStateRollbackCompleted: "Swarm rolled the rollout back",
}

// crashLoop is how many failed tasks of the current spec mean "this will
// not start" for a service Swarm creates (creation has no update to pause).
const crashLoop = 3

// ServiceStatus reports whether the service runs its current spec with
// every replica running (and healthy: Swarm only reports a task running
// once its health check passed).
func (d *Driver) ServiceStatus(ctx context.Context, svc swarm.Service) (Status, error) {
	tasks, err := d.engine.TaskList(ctx, swarm.TaskListOptions{Filters: filters.NewArgs(filters.Arg("service", svc.ID))})
	if err != nil {
		return Status{}, engineErr("list tasks of "+svc.Spec.Name, err)
	}
	return serviceStatus(svc, tasks), nil
}

func serviceStatus(svc swarm.Service, tasks []swarm.Task) Status {
	var st Status
	if r := svc.Spec.Mode.Replicated; r != nil && r.Replicas != nil {
		st.Desired = *r.Replicas
	}
	current := compact(svc.Spec.TaskTemplate.ContainerSpec)
	var stale, failed int
	var lastErr string
	var lastErrAt time.Time
	for _, t := range tasks {
		isCurrent := compact(t.Spec.ContainerSpec) == current
		switch t.Status.State {
		// A long-running task of the current spec that ended since the
		// service last changed failed to start, even with exit code 0: a
		// process that exits gracefully when Swarm kills its unhealthy
		// container is reported "complete". (Tasks a scale-down stopped
		// ended before the update that scaled the service up again.)
		case swarm.TaskStateFailed, swarm.TaskStateRejected, swarm.TaskStateComplete:
			if isCurrent && t.Status.Timestamp.After(svc.UpdatedAt) {
				failed++
			}
			if t.Status.Timestamp.After(lastErrAt) {
				lastErrAt, lastErr = t.Status.Timestamp, taskError(t)
			}
		}
		if t.DesiredState != swarm.TaskStateRunning {
			continue
		}
		if !isCurrent {
			stale++
			continue
		}
		// Swarm reports a task running for a moment when its container
		// exited with code 0 while starting (as a process does that shuts
		// down gracefully when Swarm kills it for failing its health
		// check); such a task has no process any more.
		if t.Status.State == swarm.TaskStateRunning && t.Status.ContainerStatus != nil && t.Status.ContainerStatus.PID > 0 {
			st.Running++
			st.runningIDs = append(st.runningIDs, t.ID)
		}
	}
	if u := svc.UpdateStatus; u != nil {
		switch u.State {
		case swarm.UpdateStatePaused, swarm.UpdateStateRollbackStarted, swarm.UpdateStateRollbackPaused, swarm.UpdateStateRollbackCompleted:
			st.Failed = true
			st.Reason = fmt.Sprintf("%s: %s", updateStates[u.State], u.Message)
		case swarm.UpdateStateUpdating:
			return withTaskErr(st, lastErr)
		}
	}
	if !st.Failed && failed >= crashLoop && st.Running < st.Desired {
		st.Failed = true
		st.Reason = fmt.Sprintf("%d tasks ended before running", failed)
		if cs := svc.Spec.TaskTemplate.ContainerSpec; cs != nil && cs.Healthcheck != nil && len(cs.Healthcheck.Test) > 0 && cs.Healthcheck.Test[0] != "NONE" {
			st.Reason = fmt.Sprintf("%d tasks ended before passing their health check", failed)
		}
	}
	if st.Failed {
		return withTaskErr(st, lastErr)
	}
	st.Converged = st.Running == st.Desired && stale == 0
	st.fresh = svc.UpdateStatus == nil
	return withTaskErr(st, lastErr)
}

func withTaskErr(st Status, lastErr string) Status {
	if lastErr != "" && !st.Converged {
		if st.Reason != "" {
			st.Reason += "; "
		}
		st.Reason += "last task error: " + lastErr
	}
	return st
}

func taskError(t swarm.Task) string {
	msg := t.Status.Err
	if msg == "" {
		msg = t.Status.Message
	}
	if t.Status.State == swarm.TaskStateComplete {
		msg = "the container exited with code 0"
	}
	if cs := t.Status.ContainerStatus; cs != nil && cs.ExitCode != 0 {
		msg = fmt.Sprintf("%s (exit code %d)", msg, cs.ExitCode)
	}
	return msg
}

// WaitConverged waits until the service runs its current spec with every
// replica running and healthy. It fails with rollout_failed as soon as
// Swarm pauses or rolls back the rollout (or tasks keep failing), naming
// the task error, and with convergence_timeout after timeout.
func (d *Driver) WaitConverged(ctx context.Context, want ServiceSpec, timeout time.Duration) error {
	name := want.Spec.Name
	deadline := time.Now().Add(timeout)
	var last Status
	var confirmed string
	for {
		svc, found, err := d.inspect(ctx, name, want.Spec.Labels[LabelEnv])
		if err != nil {
			return err
		}
		if !found {
			return &Error{Code: CodeRolloutFailed, Object: "service " + name, Message: "the service does not exist"}
		}
		last, err = d.ServiceStatus(ctx, svc)
		if err != nil {
			return err
		}
		if last.Converged {
			// A created service converges when the same tasks run at two
			// polls in a row, standing in for the monitor window Swarm
			// applies to updates.
			ids := strings.Join(last.runningIDs, ",")
			if !last.fresh || ids == confirmed {
				return nil
			}
			confirmed = ids
		} else {
			confirmed = ""
		}
		if last.Failed {
			return &Error{Code: CodeRolloutFailed, Object: "service " + want.Service, Message: last.Reason}
		}
		if time.Now().After(deadline) {
			msg := fmt.Sprintf("%d of %d replicas running and healthy after %s", last.Running, last.Desired, timeout)
			if last.Reason != "" {
				msg += "; " + last.Reason
			}
			return &Error{Code: CodeConvergenceTimeout, Object: "service " + want.Service, Message: msg}
		}
		if err := sleep(ctx, pollInterval); err != nil {
			return err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// StopService scales the service to zero and waits until its containers
// have exited, so a job can have its volume to itself.
func (d *Driver) StopService(ctx context.Context, env EnvRef, service string) error {
	name := ServiceName(env.ShortID, service)
	svc, found, err := d.inspect(ctx, name, env.ID)
	if err != nil || !found {
		return err
	}
	if r := svc.Spec.Mode.Replicated; r != nil && (r.Replicas == nil || *r.Replicas != 0) {
		zero := uint64(0)
		spec := svc.Spec
		spec.Mode.Replicated = &swarm.ReplicatedService{Replicas: &zero}
		if _, err := d.engine.ServiceUpdate(ctx, svc.ID, svc.Version, spec, swarm.ServiceUpdateOptions{}); err != nil {
			return engineErr("stop service "+name, err)
		}
	}
	return d.waitTasksExited(ctx, env.ID, svc.ID)
}

// waitTasksExited waits until no task of the service has a live container.
// Tasks are listed by the environment's label because a removed service
// can no longer be named in a task filter.
func (d *Driver) waitTasksExited(ctx context.Context, envID, serviceID string) error {
	byEnv := filters.NewArgs(filters.Arg("label", LabelEnv+"="+envID))
	for {
		tasks, err := d.engine.TaskList(ctx, swarm.TaskListOptions{Filters: byEnv})
		if err != nil {
			return engineErr("list tasks", err)
		}
		live := 0
		for _, t := range tasks {
			if t.ServiceID == serviceID && !terminal(t.Status.State) {
				live++
			}
		}
		if live == 0 {
			return nil
		}
		if err := sleep(ctx, pollInterval); err != nil {
			return fmt.Errorf("wait for %d tasks to exit: %w", live, err)
		}
	}
}

func terminal(s swarm.TaskState) bool {
	switch s {
	case swarm.TaskStateComplete, swarm.TaskStateShutdown, swarm.TaskStateFailed, swarm.TaskStateRejected, swarm.TaskStateRemove, swarm.TaskStateOrphaned:
		return true
	}
	return false
}

// RemoveService removes a service of the environment and waits until its
// containers are gone. A missing service is not an error.
func (d *Driver) RemoveService(ctx context.Context, env EnvRef, swarmName string) error {
	svc, found, err := d.inspect(ctx, swarmName, env.ID)
	if err != nil || !found {
		return err
	}
	if err := d.engine.ServiceRemove(ctx, svc.ID); err != nil && !cerrdefs.IsNotFound(err) {
		return engineErr("remove service "+swarmName, err)
	}
	d.log.InfoContext(ctx, "service removed", "service", swarmName)
	return d.waitTasksExited(ctx, env.ID, svc.ID)
}

// Removed is what RemoveEnvironment removed and what it kept.
type Removed struct {
	Services, Networks, Configs, Secrets []string
	// RetainedVolumes are never removed with an environment.
	RetainedVolumes []string
}

// RemoveEnvironment removes the environment's services, then its
// networks, configs and secrets. Volumes are kept and listed as retained;
// previews remove theirs with RemoveVolumes.
func (d *Driver) RemoveEnvironment(ctx context.Context, env EnvRef) (Removed, error) {
	obs, err := d.Observe(ctx, env)
	if err != nil {
		return Removed{}, err
	}
	var out Removed
	// Remove every service first, then wait for all their containers, so
	// the stop grace periods run side by side.
	for _, s := range obs.Services {
		if err := d.engine.ServiceRemove(ctx, s.ID); err != nil && !cerrdefs.IsNotFound(err) {
			return out, engineErr("remove service "+s.Spec.Name, err)
		}
		out.Services = append(out.Services, s.Spec.Name)
	}
	for _, s := range obs.Services {
		if err := d.waitTasksExited(ctx, env.ID, s.ID); err != nil {
			return out, err
		}
	}
	for _, c := range obs.Configs {
		if err := d.removeInUse(ctx, "config "+c.Spec.Name, func() error { return d.engine.ConfigRemove(ctx, c.ID) }); err != nil {
			return out, err
		}
		out.Configs = append(out.Configs, c.Spec.Name)
	}
	for _, s := range obs.Secrets {
		if err := d.removeInUse(ctx, "secret "+s.Spec.Name, func() error { return d.engine.SecretRemove(ctx, s.ID) }); err != nil {
			return out, err
		}
		out.Secrets = append(out.Secrets, s.Spec.Name)
	}
	for _, n := range obs.Networks {
		if err := d.removeInUse(ctx, "network "+n.Name, func() error { return d.engine.NetworkRemove(ctx, n.ID) }); err != nil {
			return out, err
		}
		out.Networks = append(out.Networks, n.Name)
	}
	for _, v := range obs.Volumes {
		out.RetainedVolumes = append(out.RetainedVolumes, v.Name)
	}
	return out, nil
}

// RemoveObject removes one network, config or secret of a plan's remove
// actions (services go through RemoveService; volumes RemoveVolumes).
func (d *Driver) RemoveObject(ctx context.Context, a Action) error {
	switch a.Kind {
	case KindNetwork:
		return d.removeInUse(ctx, "network "+a.Name, func() error { return d.engine.NetworkRemove(ctx, a.ID) })
	case KindConfig:
		return d.removeInUse(ctx, "config "+a.Name, func() error { return d.engine.ConfigRemove(ctx, a.ID) })
	case KindSecret:
		return d.removeInUse(ctx, "secret "+a.Name, func() error { return d.engine.SecretRemove(ctx, a.ID) })
	}
	return &Error{Code: CodeInvalidInput, Object: string(a.Kind) + " " + a.Name, Message: "RemoveObject removes networks, configs and secrets only"}
}

// removeInUse retries a removal for a while: Swarm releases networks,
// configs and secrets a little after the last task using them is gone.
func (d *Driver) removeInUse(ctx context.Context, what string, remove func() error) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := remove()
		if err == nil || cerrdefs.IsNotFound(err) {
			return nil
		}
		if time.Now().After(deadline) {
			return engineErr("remove "+what, err)
		}
		if err := sleep(ctx, pollInterval); err != nil {
			return err
		}
	}
}

// RemoveVolumes removes the environment's volumes (previews only) and
// checks that none is left.
func (d *Driver) RemoveVolumes(ctx context.Context, env EnvRef) ([]string, error) {
	byLabel := filters.NewArgs(filters.Arg("label", LabelEnv+"="+env.ID), filters.Arg("label", LabelManaged+"=true"))
	list, err := d.engine.VolumeList(ctx, volume.ListOptions{Filters: byLabel})
	if err != nil {
		return nil, engineErr("list volumes", err)
	}
	var removed []string
	for _, v := range list.Volumes {
		if err := d.removeInUse(ctx, "volume "+v.Name, func() error { return d.engine.VolumeRemove(ctx, v.Name, false) }); err != nil {
			return removed, err
		}
		removed = append(removed, v.Name)
	}
	left, err := d.engine.VolumeList(ctx, volume.ListOptions{Filters: byLabel})
	if err != nil {
		return removed, engineErr("list volumes", err)
	}
	if len(left.Volumes) > 0 {
		return removed, &Error{Code: CodeVolumeInUse, Object: "volume " + left.Volumes[0].Name, Message: fmt.Sprintf("%d volumes remain after removal", len(left.Volumes))}
	}
	return removed, nil
}
