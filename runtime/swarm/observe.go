package swarm

import (
	"context"
	"log/slog"
	"strings"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/api/types/volume"
)

// EnvRef names an environment: its id (labels) and short id (names).
type EnvRef struct {
	ID      string
	ShortID string
}

// Observed is what exists in Docker for one environment. Objects carry
// Slipway's labels for the environment; Foreign lists same-prefixed
// objects that do not, which Plan refuses to touch.
type Observed struct {
	Env      EnvRef
	Services []swarm.Service
	Tasks    []swarm.Task
	Networks []network.Summary
	Configs  []swarm.Config
	Secrets  []swarm.Secret
	Volumes  []*volume.Volume
	Foreign  []ForeignObject
	// UnavailableNodes says, for each node a service is pinned to (its
	// volumes' node) that cannot run tasks, why: "node <hostname> is
	// drained". Filled only when some service is pinned.
	UnavailableNodes map[string]string
}

// ForeignObject is an object named like one of ours without our labels.
type ForeignObject struct {
	Kind Kind
	Name string
	ID   string
}

// Driver runs Slipway's Swarm operations against an Engine.
type Driver struct {
	engine Engine
	log    *slog.Logger
}

// NewDriver returns a driver; log may be nil.
func NewDriver(engine Engine, log *slog.Logger) *Driver {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Driver{engine: engine, log: log}
}

// ownedBy reports whether labels mark an object of env.
func ownedBy(labels map[string]string, envID string) bool {
	return labels[LabelManaged] == "true" && labels[LabelEnv] == envID
}

// Observe lists everything of env with seven Engine calls (services,
// tasks, networks twice, configs, secrets, volumes), whatever the number of
// services: lists are filtered by the environment's name prefix, which also
// reveals foreign objects squatting on our names, and tasks by label.
func (d *Driver) Observe(ctx context.Context, env EnvRef) (Observed, error) {
	prefix := ObjectName(env.ShortID, "")
	byName := filters.NewArgs(filters.Arg("name", prefix))
	obs := Observed{Env: env}
	var foreign []ForeignObject
	sort := func(kind Kind, name, id string, labels map[string]string) bool {
		if !strings.HasPrefix(name, prefix) {
			return false
		}
		if ownedBy(labels, env.ID) {
			return true
		}
		foreign = append(foreign, ForeignObject{Kind: kind, Name: name, ID: id})
		return false
	}

	services, err := d.engine.ServiceList(ctx, swarm.ServiceListOptions{Filters: byName, Status: true})
	if err != nil {
		return Observed{}, engineErr("list services", err)
	}
	for _, s := range services {
		if sort(KindService, s.Spec.Name, s.ID, s.Spec.Labels) {
			obs.Services = append(obs.Services, s)
		}
	}
	tasks, err := d.engine.TaskList(ctx, swarm.TaskListOptions{Filters: filters.NewArgs(filters.Arg("label", LabelEnv+"="+env.ID))})
	if err != nil {
		return Observed{}, engineErr("list tasks", err)
	}
	obs.Tasks = tasks
	// Swarm matches network names exactly (a prefix filter only finds
	// networks with a container on this node), so networks are listed by
	// label, plus by the environment's well-known names to reveal foreign
	// networks squatting on them: two calls.
	labelled, err := d.engine.NetworkList(ctx, network.ListOptions{Filters: filters.NewArgs(filters.Arg("label", LabelEnv+"="+env.ID))})
	if err != nil {
		return Observed{}, engineErr("list networks", err)
	}
	named, err := d.engine.NetworkList(ctx, network.ListOptions{Filters: filters.NewArgs(
		filters.Arg("name", NetworkName(env.ShortID)), filters.Arg("name", IngressNetworkName(env.ShortID)))})
	if err != nil {
		return Observed{}, engineErr("list networks", err)
	}
	seen := map[string]bool{}
	for _, n := range append(labelled, named...) {
		if seen[n.ID] {
			continue
		}
		seen[n.ID] = true
		if ownedBy(n.Labels, env.ID) {
			obs.Networks = append(obs.Networks, n)
		} else if n.Name == NetworkName(env.ShortID) || n.Name == IngressNetworkName(env.ShortID) {
			foreign = append(foreign, ForeignObject{Kind: KindNetwork, Name: n.Name, ID: n.ID})
		}
	}
	configs, err := d.engine.ConfigList(ctx, swarm.ConfigListOptions{Filters: byName})
	if err != nil {
		return Observed{}, engineErr("list configs", err)
	}
	for _, c := range configs {
		if sort(KindConfig, c.Spec.Name, c.ID, c.Spec.Labels) {
			obs.Configs = append(obs.Configs, c)
		}
	}
	secrets, err := d.engine.SecretList(ctx, swarm.SecretListOptions{Filters: byName})
	if err != nil {
		return Observed{}, engineErr("list secrets", err)
	}
	for _, s := range secrets {
		if sort(KindSecret, s.Spec.Name, s.ID, s.Spec.Labels) {
			obs.Secrets = append(obs.Secrets, s)
		}
	}
	volumes, err := d.engine.VolumeList(ctx, volume.ListOptions{Filters: byName})
	if err != nil {
		return Observed{}, engineErr("list volumes", err)
	}
	for _, v := range volumes.Volumes {
		if sort(KindVolume, v.Name, v.Name, v.Labels) {
			obs.Volumes = append(obs.Volumes, v)
		}
	}
	obs.Foreign = foreign
	if obs.UnavailableNodes, err = d.unavailableNodes(ctx, obs.Services); err != nil {
		return Observed{}, err
	}
	return obs, nil
}

// Service returns the observed service with the given Swarm name.
func (o *Observed) Service(name string) (swarm.Service, bool) {
	for _, s := range o.Services {
		if s.Spec.Name == name {
			return s, true
		}
	}
	return swarm.Service{}, false
}

// TasksOf returns the observed tasks of a service.
func (o *Observed) TasksOf(serviceID string) []swarm.Task {
	var out []swarm.Task
	for _, t := range o.Tasks {
		if t.ServiceID == serviceID {
			out = append(out, t)
		}
	}
	return out
}
