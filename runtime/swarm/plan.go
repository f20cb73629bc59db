package swarm

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/docker/docker/api/types/swarm"
)

// Kind is a Docker object kind.
type Kind string

// Object kinds.
const (
	KindNetwork Kind = "network"
	KindVolume  Kind = "volume"
	KindConfig  Kind = "config"
	KindSecret  Kind = "secret"
	KindService Kind = "service"
)

// Op is what an action does.
type Op string

// Operations.
const (
	OpCreate Op = "create"
	OpUpdate Op = "update"
	OpRemove Op = "remove"
)

// Action is one change Plan wants.
type Action struct {
	Op   Op
	Kind Kind
	// Name is the Docker name; Service the manifest service, if any.
	Name    string
	Service string `json:",omitempty"`
	// Job is set when the service is a job run an earlier deployment left
	// behind; the pipeline removes those before running its own jobs.
	Job string `json:",omitempty"`
	// ID of the observed object (update, remove).
	ID    string  `json:",omitempty"`
	Drift []Drift `json:",omitempty"`
}

// Drift is one field whose observed value differs from the desired one.
type Drift struct {
	Field    string
	Observed string
	Desired  string
}

func (a Action) String() string {
	s := fmt.Sprintf("%s %s %s", a.Op, a.Kind, a.Name)
	for _, d := range a.Drift {
		s += fmt.Sprintf(" [%s: %s -> %s]", d.Field, d.Observed, d.Desired)
	}
	return s
}

// Actions is a plan, in the order the pipeline applies it: networks,
// volumes, configs and secrets are created first; services are created or
// updated; removed services go next, then the configs, secrets and
// networks nothing uses any more. Volumes are never removed by a plan.
type Actions []Action

// Plan diffs observed against desired. It refuses with name_conflict when
// a desired name is taken by an object without the environment's labels:
// such objects are never adopted, changed or removed.
func Plan(observed Observed, desired DesiredState) (Actions, error) {
	if err := conflicts(observed, desired); err != nil {
		return nil, err
	}
	var creates, updates, removes Actions

	haveNet := map[string]string{}
	for _, n := range observed.Networks {
		haveNet[n.Name] = n.ID
	}
	wantNet := map[string]bool{}
	for _, n := range desired.Networks {
		wantNet[n.Name] = true
		if _, ok := haveNet[n.Name]; !ok {
			creates = append(creates, Action{Op: OpCreate, Kind: KindNetwork, Name: n.Name})
		}
	}
	haveVol := map[string]bool{}
	for _, v := range observed.Volumes {
		haveVol[v.Name] = true
	}
	for _, v := range desired.Volumes {
		if !haveVol[v.Name] {
			creates = append(creates, Action{Op: OpCreate, Kind: KindVolume, Name: v.Name})
		}
	}
	haveCfg := map[string]string{}
	for _, c := range observed.Configs {
		haveCfg[c.Spec.Name] = c.ID
	}
	wantCfg := map[string]bool{}
	for _, c := range desired.Configs {
		wantCfg[c.Name] = true
		if _, ok := haveCfg[c.Name]; !ok {
			creates = append(creates, Action{Op: OpCreate, Kind: KindConfig, Name: c.Name})
		}
	}
	haveSec := map[string]string{}
	for _, s := range observed.Secrets {
		haveSec[s.Spec.Name] = s.ID
	}
	wantSec := map[string]bool{}
	for _, s := range desired.Secrets {
		wantSec[s.Name] = true
		if _, ok := haveSec[s.Name]; !ok {
			creates = append(creates, Action{Op: OpCreate, Kind: KindSecret, Name: s.Name})
		}
	}

	netNames := map[string]string{}
	for _, n := range observed.Networks {
		netNames[n.ID] = n.Name
	}
	wantSvc := map[string]bool{}
	for _, s := range desired.Services {
		wantSvc[s.Spec.Name] = true
		have, ok := observed.Service(s.Spec.Name)
		if !ok {
			creates = append(creates, Action{Op: OpCreate, Kind: KindService, Name: s.Spec.Name, Service: s.Service})
			continue
		}
		if drift := ServiceDrift(have.Spec, s.Spec, netNames); len(drift) > 0 {
			updates = append(updates, Action{Op: OpUpdate, Kind: KindService, Name: s.Spec.Name, Service: s.Service, ID: have.ID, Drift: drift})
		}
	}
	for _, s := range observed.Services {
		// Runs of this deployment's jobs belong to RunJob, and one-off runs
		// (scheduled jobs, backups, restores) to their own worker, which
		// keeps what they mount; everything else not desired, including
		// job runs earlier deployments left behind, goes.
		if s.Spec.Labels[LabelRun] != "" {
			keepMounted(s, wantCfg, wantSec)
			continue
		}
		if wantSvc[s.Spec.Name] || s.Spec.Labels[LabelJob] != "" && isCurrentJob(s, desired) {
			continue
		}
		removes = append(removes, Action{Op: OpRemove, Kind: KindService, Name: s.Spec.Name, Service: s.Spec.Labels[LabelService], Job: s.Spec.Labels[LabelJob], ID: s.ID})
	}
	for _, c := range observed.Configs {
		if !wantCfg[c.Spec.Name] {
			removes = append(removes, Action{Op: OpRemove, Kind: KindConfig, Name: c.Spec.Name, ID: c.ID})
		}
	}
	for _, s := range observed.Secrets {
		if !wantSec[s.Spec.Name] {
			removes = append(removes, Action{Op: OpRemove, Kind: KindSecret, Name: s.Spec.Name, ID: s.ID})
		}
	}
	for _, n := range observed.Networks {
		if !wantNet[n.Name] {
			removes = append(removes, Action{Op: OpRemove, Kind: KindNetwork, Name: n.Name, ID: n.ID})
		}
	}
	out := append(append(creates, updates...), removes...)
	return out, nil
}

func isCurrentJob(s swarm.Service, desired DesiredState) bool {
	for _, j := range desired.Jobs {
		if j.Spec.Name == s.Spec.Name {
			return true
		}
	}
	return false
}

func conflicts(observed Observed, desired DesiredState) error {
	want := map[string]Kind{}
	for _, n := range desired.Networks {
		want[string(KindNetwork)+"/"+n.Name] = KindNetwork
	}
	for _, v := range desired.Volumes {
		want[string(KindVolume)+"/"+v.Name] = KindVolume
	}
	for _, c := range desired.Configs {
		want[string(KindConfig)+"/"+c.Name] = KindConfig
	}
	for _, s := range desired.Secrets {
		want[string(KindSecret)+"/"+s.Name] = KindSecret
	}
	for _, s := range desired.Services {
		want[string(KindService)+"/"+s.Spec.Name] = KindService
	}
	for _, j := range desired.Jobs {
		want[string(KindService)+"/"+j.Spec.Name] = KindService
	}
	var names []string
	for _, f := range observed.Foreign {
		if _, ok := want[string(f.Kind)+"/"+f.Name]; ok {
			names = append(names, fmt.Sprintf("%s %s", f.Kind, f.Name))
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	return &Error{
		Code:    CodeNameConflict,
		Object:  strings.Join(names, ", "),
		Message: "an object with this name exists without Slipway's labels for this environment; Slipway never adopts or removes it: rename or remove it yourself",
	}
}

// ServiceDrift compares the fields Slipway sets, one by one. netNames maps
// observed network IDs to names (Swarm stores attachments by ID). A
// changed spec-hash label with no other difference still counts, so a
// field this list forgets cannot hide a change.
func ServiceDrift(observed, desired swarm.ServiceSpec, netNames map[string]string) []Drift {
	var out []Drift
	add := func(field string, o, d any) {
		ob, ds := compact(o), compact(d)
		if ob != ds {
			out = append(out, Drift{Field: field, Observed: ob, Desired: ds})
		}
	}
	oc, dc := observed.TaskTemplate.ContainerSpec, desired.TaskTemplate.ContainerSpec
	if oc == nil {
		oc = &swarm.ContainerSpec{}
	}
	add("image", oc.Image, dc.Image)
	add("replicas", replicas(observed), replicas(desired))
	add("environment", nonEmpty(oc.Env), nonEmpty(dc.Env))
	add("command", nonEmpty(oc.Command), nonEmpty(dc.Command))
	add("arguments", nonEmpty(oc.Args), nonEmpty(dc.Args))
	add("mounts", mounts(oc), mounts(dc))
	add("user", oc.User, dc.User)
	add("labels", stableLabels(observed.Labels), stableLabels(desired.Labels))
	add("container_labels", stableLabels(oc.Labels), stableLabels(dc.Labels))
	add("healthcheck", oc.Healthcheck, dc.Healthcheck)
	add("resources", limits(observed.TaskTemplate.Resources), limits(desired.TaskTemplate.Resources))
	add("networks", networks(observed.TaskTemplate.Networks, netNames), networks(desired.TaskTemplate.Networks, nil))
	add("files", configRefs(oc.Configs), configRefs(dc.Configs))
	add("secrets", secretRefs(oc.Secrets), secretRefs(dc.Secrets))
	add("rollout", observed.UpdateConfig, desired.UpdateConfig)
	add("restart_policy", observed.TaskTemplate.RestartPolicy, desired.TaskTemplate.RestartPolicy)
	add("endpoint_mode", endpointMode(observed.EndpointSpec), endpointMode(desired.EndpointSpec))
	add("stop_grace_period", oc.StopGracePeriod, dc.StopGracePeriod)
	if len(out) == 0 && observed.Labels[LabelSpecHash] != desired.Labels[LabelSpecHash] {
		add("spec_hash", observed.Labels[LabelSpecHash], desired.Labels[LabelSpecHash])
	}
	return out
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func nonEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func replicas(s swarm.ServiceSpec) any {
	switch {
	case s.Mode.Replicated != nil && s.Mode.Replicated.Replicas != nil:
		return *s.Mode.Replicated.Replicas
	case s.Mode.ReplicatedJob != nil:
		return "job"
	}
	return nil
}

// stableLabels drops the labels that change with every deployment without
// changing what runs.
func stableLabels(l map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range l {
		if k != LabelDeployment && k != LabelSpecHash {
			out[k] = v
		}
	}
	return out
}

func mounts(c *swarm.ContainerSpec) []string {
	var out []string
	for _, m := range c.Mounts {
		out = append(out, fmt.Sprintf("%s:%s:%s:ro=%t", m.Type, m.Source, m.Target, m.ReadOnly))
	}
	return out
}

// limits are the resources Slipway sets that every supported engine keeps:
// CPU, memory and process limits, CPU and memory reservations. (A
// container's no-new-privileges is not compared: Docker 20.10 drops it
// from the spec, and it would drift forever.)
func limits(r *swarm.ResourceRequirements) [5]int64 {
	var out [5]int64
	if r == nil {
		return out
	}
	if l := r.Limits; l != nil {
		out[0], out[1], out[2] = l.NanoCPUs, l.MemoryBytes, l.Pids
	}
	if res := r.Reservations; res != nil {
		out[3], out[4] = res.NanoCPUs, res.MemoryBytes
	}
	return out
}

func networks(n []swarm.NetworkAttachmentConfig, names map[string]string) []string {
	var out []string
	for _, a := range n {
		target := a.Target
		if name, ok := names[target]; ok {
			target = name
		}
		out = append(out, target+"="+strings.Join(a.Aliases, ","))
	}
	sort.Strings(out)
	return out
}

func configRefs(refs []*swarm.ConfigReference) []string {
	var out []string
	for _, r := range refs {
		if r.File != nil {
			out = append(out, fmt.Sprintf("%s:%s:%o", r.ConfigName, r.File.Name, r.File.Mode))
		}
	}
	sort.Strings(out)
	return out
}

func secretRefs(refs []*swarm.SecretReference) []string {
	var out []string
	for _, r := range refs {
		if r.File != nil {
			out = append(out, fmt.Sprintf("%s:%s:%o", r.SecretName, r.File.Name, r.File.Mode))
		}
	}
	sort.Strings(out)
	return out
}

func endpointMode(e *swarm.EndpointSpec) swarm.ResolutionMode {
	if e == nil || e.Mode == "" {
		return swarm.ResolutionModeVIP
	}
	return e.Mode
}
