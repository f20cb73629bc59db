package swarm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/swarm"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/runtime/probe"
)

// Labels Slipway puts on every object it creates. Only objects carrying
// LabelManaged=true and the environment's LabelEnv are ever changed or
// removed.
const (
	LabelManaged    = "dev.slipway.managed"
	LabelTeam       = "dev.slipway.team"
	LabelApp        = "dev.slipway.app"
	LabelEnv        = "dev.slipway.env"
	LabelService    = "dev.slipway.service"
	LabelDeployment = "dev.slipway.deployment"
	LabelSpecHash   = "dev.slipway.spec-hash"
	// LabelJob names the manifest job a job service runs.
	LabelJob = "dev.slipway.job"
	// LabelRole tells the environment network from the ingress network and
	// file configs from the probe.
	LabelRole = "dev.slipway.role"
)

// Spec defaults, from the manifest specification.
const (
	DefaultReplicas        = 1
	DefaultHealthPath      = "/health"
	DefaultHealthInterval  = 10
	DefaultHealthTimeout   = 3
	DefaultHealthRetries   = 3
	DefaultMonitorSeconds  = 30
	DefaultJobTimeout      = 300
	DefaultFileMode        = 0o444
	DefaultStopGracePeriod = 10 * time.Second
	// RestartMaxAttempts and RestartWindow bound how often Swarm restarts
	// a service's failing task: at most RestartMaxAttempts restarts in any
	// RestartWindow, counted afresh for each spec version. Unbounded, the
	// restart supervisor would retry the new task of a paused start-first
	// rollout forever, and the orchestrator could then retire the previous
	// task that still serves (docs/deployments.md, "Failed rollouts").
	RestartMaxAttempts = 5
	RestartWindow      = 10 * time.Minute
	// TelemetryPath is where a telemetry receiver finds its socket.
	TelemetryPath = "/run/slipway/telemetry"
	// IngressProxiesEnv is injected into routed services.
	IngressProxiesEnv = "SLIPWAY_INGRESS_PROXIES"
	secretsDir        = "/run/secrets/"
	maxNameLen        = 63
	// DefaultPidsLimit bounds the processes and threads of one tenant
	// container when DesiredInput.PidsLimit is 0 ([containers] pids_limit).
	DefaultPidsLimit = 1024
	// DefaultMemoryLimit is a service's memory limit when its manifest
	// sets none and DesiredInput.DefaultMemoryBytes is 0
	// ([containers] default_memory_bytes).
	DefaultMemoryLimit = 512 << 20
)

// SecretValue is a secret's captured value and the version it was pinned
// at. The value only lives in memory inside the worker.
type SecretValue struct {
	Value   []byte
	Version string
}

// DesiredInput is everything Desired needs: a rendered manifest and the
// environment it deploys into.
type DesiredInput struct {
	// Manifest is rendered: every Int is concrete.
	Manifest *manifest.Manifest

	TeamID, AppID string
	// EnvID is the environment's id; EnvShortID a short, stable,
	// DNS-safe form of it used in object names.
	EnvID, EnvShortID string
	DeploymentID      string

	// Images maps each service to the image reference the prepare step
	// resolved (a digest-pinned reference or a local image ID).
	Images map[string]string
	// Secrets maps secret names (stored or generated) to their values.
	Secrets map[string]SecretValue
	// RepositoryFiles maps a file's repository path to its captured bytes.
	RepositoryFiles map[string][]byte

	// IngressNetwork is the environment's ingress overlay; routed services
	// join it. Empty means "slw-<short id>-ingress".
	IngressNetwork string
	// Routed lists the services routes send traffic to.
	Routed []string
	// IngressProxies is the value of SLIPWAY_INGRESS_PROXIES for routed
	// services.
	IngressProxies string

	// TelemetryDir is set when the environment is granted telemetry: the
	// host directory holding its telemetry socket, mounted at
	// TelemetryPath into the service that sets receives_telemetry, which
	// then runs as TelemetryUser ("uid:gid", the daemon's user).
	TelemetryDir  string
	TelemetryUser string

	// Links are the link networks the environment's services join now
	// (Driver.EnvLinks): a deployment keeps them, and the links_reconcile
	// job changes them. They do not count in a service's spec hash.
	Links []LinkAttachment
	// JobLinks are the link networks the deployment's jobs join: those of
	// Links whose link the deployment keeps importing. A new import is
	// connected only after the deployment succeeds, so no job reaches it.
	JobLinks []LinkAttachment

	// VolumeNodes maps a manifest volume to the Swarm node ID holding it
	// (recorded when it was first created): every service and job
	// mounting it is constrained to that node, never started elsewhere on
	// an empty volume.
	VolumeNodes map[string]string
	// PidsLimit bounds each container's processes; 0 is DefaultPidsLimit.
	PidsLimit int64
	// DefaultMemoryBytes is the memory limit of a service whose manifest
	// sets none; 0 is DefaultMemoryLimit.
	DefaultMemoryBytes int64
	// LimitOnly names, per service, the resources that are defaults the
	// daemon filled in (a preview's bounds) rather than the manifest's
	// own: they limit the service but reserve nothing on the node.
	LimitOnly map[string]LimitOnly

	// Probe overrides the embedded probe binary (tests only).
	Probe []byte
}

// LimitOnly says which of a service's resources only limit it.
type LimitOnly struct{ CPU, Memory bool }

// DesiredState is what should run in one environment.
type DesiredState struct {
	EnvID    string
	Labels   map[string]string
	Networks []NetworkSpec
	Volumes  []VolumeSpec
	Configs  []swarm.ConfigSpec
	Secrets  []swarm.SecretSpec
	// Services in the manifest's order; DependsOn gives rollout order.
	Services []ServiceSpec
	// Jobs in the order they run.
	Jobs []JobSpec
	// Scheduled are the jobs that run on a schedule, never during a
	// deployment; each run is ScheduledRun of one of them.
	Scheduled []JobSpec
}

// NetworkSpec is an attachable overlay network.
type NetworkSpec struct {
	Name   string
	Labels map[string]string
}

// VolumeSpec is a named local volume.
type VolumeSpec struct {
	Name   string
	Labels map[string]string
	// Volume is the manifest name; Node the node ID it is pinned to ("":
	// not pinned).
	Volume string `json:",omitempty"`
	Node   string `json:",omitempty"`
}

// ServiceSpec is one desired service.
type ServiceSpec struct {
	// Service is the manifest name; Spec.Name the Swarm name.
	Service   string
	DependsOn []string
	// HasHealthcheck tells convergence whether "running" is enough.
	HasHealthcheck bool
	// WritableVolumes are the volumes this service mounts writable; an
	// exclusive job stops the services that mount its volumes.
	WritableVolumes []string
	Spec            swarm.ServiceSpec
	// RegistryAuth is the X-Registry-Auth value Swarm gets with each
	// create and update, so every node can pull the image (the pipeline
	// sets it; it is no part of the spec or its hash, and never logged).
	RegistryAuth string `json:"-"`
}

// JobSpec is one desired job run for this deployment.
type JobSpec struct {
	Job     string
	Service string
	Timeout time.Duration
	// StopServices are the manifest services to stop (scale to 0) before
	// the job starts: its own service for stop_service, and the services
	// mounting its service's writable volumes for exclusive access.
	StopServices []string
	Spec         swarm.ServiceSpec
	// RegistryAuth is as ServiceSpec's.
	RegistryAuth string `json:"-"`
}

// Service returns the desired service with the given manifest name.
func (d *DesiredState) Service(name string) (ServiceSpec, bool) {
	for _, s := range d.Services {
		if s.Service == name {
			return s, true
		}
	}
	return ServiceSpec{}, false
}

// Job returns the desired job with the given manifest name.
func (d *DesiredState) Job(name string) (JobSpec, bool) {
	for _, j := range d.Jobs {
		if j.Job == name {
			return j, true
		}
	}
	return JobSpec{}, false
}

// ObjectName returns slw-<short>-<name>, at most 63 bytes: longer names
// keep a prefix and end with a hash of the whole name, so they stay unique
// and stable.
func ObjectName(envShortID, name string) string {
	full := "slw-" + envShortID + "-" + name
	if len(full) <= maxNameLen {
		return full
	}
	sum := sha256.Sum256([]byte(full))
	suffix := "-" + hex.EncodeToString(sum[:])[:10]
	return strings.TrimRight(full[:maxNameLen-len(suffix)], "-") + suffix
}

// NetworkName is the environment's private overlay network.
func NetworkName(envShortID string) string { return ObjectName(envShortID, "net") }

// IngressNetworkName is the default name of the environment's ingress overlay.
func IngressNetworkName(envShortID string) string { return ObjectName(envShortID, "ingress") }

// VolumeName is the Docker name of a manifest volume.
func VolumeName(envShortID, volume string) string { return ObjectName(envShortID, "vol-"+volume) }

// ServiceName is the Swarm name of a manifest service.
func ServiceName(envShortID, service string) string { return ObjectName(envShortID, service) }

// JobServiceName is the Swarm name of a job run; it includes the
// deployment so a resumed deployment finds its own run, and a later
// deployment never mistakes an old run for its own.
func JobServiceName(envShortID, deploymentID, job string) string {
	return ObjectName(envShortID, "job-"+job+"-"+shortHash(deploymentID, 8))
}

func shortHash(s string, n int) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:n]
}

// Desired computes the desired Swarm objects for in. It does no I/O and is
// deterministic: the same input gives byte-identical specs.
func Desired(in DesiredInput) (DesiredState, error) {
	if in.Manifest == nil {
		return DesiredState{}, &Error{Code: CodeInvalidInput, Object: "manifest", Message: "no manifest"}
	}
	if in.EnvID == "" || in.EnvShortID == "" {
		return DesiredState{}, &Error{Code: CodeInvalidInput, Object: "environment", Message: "environment id and short id are required"}
	}
	b := builder{in: in, short: in.EnvShortID}
	b.base = map[string]string{
		LabelManaged: "true",
		LabelTeam:    in.TeamID,
		LabelApp:     in.AppID,
		LabelEnv:     in.EnvID,
	}
	st := DesiredState{EnvID: in.EnvID, Labels: copyLabels(b.base)}
	spec := in.Manifest.Spec

	st.Networks = append(st.Networks, NetworkSpec{Name: NetworkName(b.short), Labels: b.labels(map[string]string{LabelRole: "environment"})})
	routed := map[string]bool{}
	for _, r := range in.Routed {
		routed[r] = true
	}
	b.ingress = in.IngressNetwork
	if b.ingress == "" {
		b.ingress = IngressNetworkName(b.short)
	}
	if len(routed) > 0 {
		st.Networks = append(st.Networks, NetworkSpec{Name: b.ingress, Labels: b.labels(map[string]string{LabelRole: "ingress"})})
	}

	for _, v := range spec.Volumes {
		st.Volumes = append(st.Volumes, VolumeSpec{Name: VolumeName(b.short, v.Name), Labels: b.labels(map[string]string{"dev.slipway.volume": v.Name}),
			Volume: v.Name, Node: in.VolumeNodes[v.Name]})
	}

	b.configs = map[string]swarm.ConfigSpec{}
	b.secrets = map[string]swarm.SecretSpec{}
	for i, svc := range spec.Services {
		s, err := b.service(fmt.Sprintf("spec.services[%d]", i), svc, routed[svc.Name])
		if err != nil {
			return DesiredState{}, err
		}
		st.Services = append(st.Services, s)
	}
	for i, job := range spec.Jobs {
		j, err := b.job(fmt.Sprintf("spec.jobs[%d]", i), job, st)
		if err != nil {
			return DesiredState{}, err
		}
		if job.Scheduled() {
			st.Scheduled = append(st.Scheduled, j)
			continue
		}
		st.Jobs = append(st.Jobs, j)
	}
	st.Configs = sortedValues(b.configs, func(c swarm.ConfigSpec) string { return c.Name })
	st.Secrets = sortedValues(b.secrets, func(s swarm.SecretSpec) string { return s.Name })
	if err := checkConfined(st, in.TelemetryDir); err != nil {
		return DesiredState{}, err
	}
	return st, nil
}

// checkConfined is the last word on what a tenant container gets, however
// its spec was built: no privilege escalation, no capabilities added, no
// host namespaces, and no host path but the environment's telemetry
// directory, which is never the Docker socket or a directory above it.
func checkConfined(st DesiredState, telemetryDir string) error {
	specs := make([]swarm.ServiceSpec, 0, len(st.Services)+len(st.Jobs))
	for _, s := range st.Services {
		specs = append(specs, s.Spec)
	}
	for _, j := range st.Jobs {
		specs = append(specs, j.Spec)
	}
	for _, spec := range specs {
		cs := spec.TaskTemplate.ContainerSpec
		bad := func(msg string) error {
			return &Error{Code: CodeInvalidInput, Object: spec.Name, Message: "tenant container not confined: " + msg}
		}
		switch {
		case cs == nil:
			return bad("no container spec")
		case cs.Privileges == nil || !cs.Privileges.NoNewPrivileges:
			return bad("no-new-privileges is not set")
		case len(cs.CapabilityAdd) > 0:
			return bad("capabilities added")
		case len(cs.Sysctls) > 0, cs.Isolation != "":
			return bad("kernel settings or isolation changed")
		case spec.TaskTemplate.Resources == nil || spec.TaskTemplate.Resources.Limits == nil ||
			spec.TaskTemplate.Resources.Limits.Pids <= 0 || spec.TaskTemplate.Resources.Limits.MemoryBytes <= 0:
			return bad("no process or memory limit")
		}
		for _, m := range cs.Mounts {
			if m.Type == mount.TypeVolume {
				continue
			}
			if m.Type != mount.TypeBind || telemetryDir == "" || m.Source != telemetryDir || !safeHostPath(m.Source) {
				return bad(fmt.Sprintf("host path %q mounted", m.Source))
			}
		}
	}
	return nil
}

// safeHostPath refuses the Docker socket, the directories holding it and
// the root.
func safeHostPath(p string) bool {
	p = strings.TrimRight(p, "/")
	if p == "" || !strings.HasPrefix(p, "/") || strings.Contains(p, "..") {
		return false
	}
	for _, sock := range []string{"/var/run/docker.sock", "/run/docker.sock"} {
		if p == sock || strings.HasPrefix(sock, p+"/") {
			return false
		}
	}
	return true
}

type builder struct {
	in      DesiredInput
	short   string
	ingress string
	base    map[string]string
	configs map[string]swarm.ConfigSpec
	secrets map[string]swarm.SecretSpec
}

func (b *builder) labels(extra map[string]string) map[string]string {
	l := copyLabels(b.base)
	for k, v := range extra {
		l[k] = v
	}
	return l
}

// service builds one service; field is its manifest path, for errors.
func (b *builder) service(field string, svc manifest.Service, routed bool) (ServiceSpec, error) {
	image := b.in.Images[svc.Name]
	if image == "" {
		return ServiceSpec{}, &Error{Code: CodeInvalidInput, Object: field + ".source", Message: "no prepared image for this service"}
	}
	cs := &swarm.ContainerSpec{
		Image:           image,
		Command:         svc.Command,
		Args:            svc.Arguments,
		Env:             envList(svc.Environment, nil),
		StopGracePeriod: durationPtr(DefaultStopGracePeriod),
		Privileges:      confined(),
	}
	if routed {
		cs.Env = envList(svc.Environment, map[string]string{IngressProxiesEnv: b.in.IngressProxies})
	}
	var writable []string
	var pinned []string
	for _, m := range svc.Mounts {
		cs.Mounts = append(cs.Mounts, mount.Mount{Type: mount.TypeVolume, Source: VolumeName(b.short, m.Volume), Target: m.Target, ReadOnly: m.ReadOnly})
		if !m.ReadOnly {
			writable = append(writable, m.Volume)
		}
		if n := b.in.VolumeNodes[m.Volume]; n != "" && !slices.Contains(pinned, "node.id=="+n) {
			pinned = append(pinned, "node.id=="+n)
		}
	}
	sort.Strings(pinned)
	if svc.ReceivesTelemetry && b.in.TelemetryDir != "" {
		cs.Mounts = append(cs.Mounts, mount.Mount{Type: mount.TypeBind, Source: b.in.TelemetryDir, Target: TelemetryPath})
		cs.User = b.in.TelemetryUser
	}
	if err := b.files(cs, svc.Files, field); err != nil {
		return ServiceSpec{}, err
	}
	if err := b.secretMounts(cs, svc.Secrets, field); err != nil {
		return ServiceSpec{}, err
	}
	if hc := svc.Healthcheck; hc != nil {
		health, err := b.healthcheck(cs, hc, field+".healthcheck")
		if err != nil {
			return ServiceSpec{}, err
		}
		cs.Healthcheck = health
	}

	order := swarm.UpdateOrderStartFirst
	if len(writable) > 0 || svc.ReceivesTelemetry {
		order = swarm.UpdateOrderStopFirst
	}
	monitor := int64(DefaultMonitorSeconds)
	if r := svc.Rollout; r != nil {
		if r.Order != "" {
			order = r.Order
		}
		monitor = r.MonitorSeconds.Or(DefaultMonitorSeconds)
	}
	replicas := uint64(svc.Replicas.Or(DefaultReplicas))

	networks := []swarm.NetworkAttachmentConfig{{Target: NetworkName(b.short), Aliases: []string{svc.Name}}}
	if routed {
		networks = append(networks, swarm.NetworkAttachmentConfig{Target: b.ingress, Aliases: []string{svc.Name}})
	}
	spec := swarm.ServiceSpec{
		Annotations: swarm.Annotations{Name: ServiceName(b.short, svc.Name)},
		TaskTemplate: swarm.TaskSpec{
			ContainerSpec: cs,
			Resources:     b.resources(svc),
			// A service is long-running: it restarts whatever its exit code,
			// but only so often per spec version (RestartMaxAttempts).
			RestartPolicy: restartPolicy(),
			Networks:      networks,
			Placement:     placement(pinned),
		},
		Mode: swarm.ServiceMode{Replicated: &swarm.ReplicatedService{Replicas: &replicas}},
		UpdateConfig: &swarm.UpdateConfig{
			Parallelism:   1,
			Order:         order,
			FailureAction: swarm.UpdateFailureActionPause,
			Monitor:       time.Duration(monitor) * time.Second,
		},
		EndpointSpec: &swarm.EndpointSpec{Mode: swarm.ResolutionModeDNSRR},
	}
	labels := b.labels(map[string]string{LabelService: svc.Name})
	cs.Labels = copyLabels(labels)
	spec.Labels = labels
	// The service's identity is the manifest's per-service spec hash (its
	// canonical settings and the repository files it mounts): what the
	// deployment says it runs is what the label says.
	hash, err := manifest.ServiceHash(b.in.Manifest, svc.Name, b.in.RepositoryFiles)
	if err != nil {
		return ServiceSpec{}, &Error{Code: CodeInvalidInput, Object: field, Message: err.Error()}
	}
	spec.Labels[LabelSpecHash] = hash
	spec.Labels[LabelDeployment] = b.in.DeploymentID
	spec.TaskTemplate.Networks = append(spec.TaskTemplate.Networks, linkAttachmentsFor(b.in.Links, svc.Name, false)...)
	return ServiceSpec{
		Service:         svc.Name,
		DependsOn:       svc.DependsOn,
		HasHealthcheck:  svc.Healthcheck != nil,
		WritableVolumes: writable,
		Spec:            spec,
	}, nil
}

// specHash fingerprints a service spec before the deployment and hash
// labels are added, so an unchanged service keeps its hash across
// deployments and is not rolled out again.
func specHash(spec swarm.ServiceSpec) string {
	b, _ := json.Marshal(spec)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16]
}

func (b *builder) healthcheck(cs *swarm.ContainerSpec, hc *manifest.Healthcheck, field string) (*container.HealthConfig, error) {
	h := &container.HealthConfig{
		Interval:    time.Duration(hc.IntervalSeconds.Or(DefaultHealthInterval)) * time.Second,
		Timeout:     time.Duration(hc.TimeoutSeconds.Or(DefaultHealthTimeout)) * time.Second,
		StartPeriod: time.Duration(hc.StartPeriodSeconds.Or(0)) * time.Second,
		Retries:     int(hc.Retries.Or(DefaultHealthRetries)),
	}
	switch hc.Type {
	case manifest.HealthcheckHTTP:
		port := hc.Port.Or(0)
		if port < 1 || port > 65535 {
			return nil, &Error{Code: CodeInvalidInput, Object: field + ".port", Message: "an HTTP health check needs a port between 1 and 65535"}
		}
		path := hc.Path
		if path == "" {
			path = DefaultHealthPath
		}
		h.Test = probe.HTTPTest(int(port), path, int(hc.TimeoutSeconds.Or(DefaultHealthTimeout)))
		b.probe(cs)
	case manifest.HealthcheckCommand:
		if len(hc.Command) == 0 {
			return nil, &Error{Code: CodeInvalidInput, Object: field + ".command", Message: "a command health check needs a command"}
		}
		h.Test = append([]string{"CMD"}, hc.Command...)
	default:
		return nil, &Error{Code: CodeInvalidInput, Object: field + ".type", Message: fmt.Sprintf("unknown health check type %q", hc.Type)}
	}
	return h, nil
}

// probe adds the probe config, mounted executable at probe.Path.
func (b *builder) probe(cs *swarm.ContainerSpec) {
	bin := b.in.Probe
	if bin == nil {
		bin = probe.Binary
	}
	name := ObjectName(b.short, "probe-"+shortHash(string(bin), 12))
	b.configs[name] = swarm.ConfigSpec{
		Annotations: swarm.Annotations{Name: name, Labels: b.labels(map[string]string{LabelRole: "probe"})},
		Data:        bin,
	}
	cs.Configs = append(cs.Configs, &swarm.ConfigReference{
		File:       &swarm.ConfigReferenceFileTarget{Name: probe.Path, UID: "0", GID: "0", Mode: 0o555},
		ConfigName: name,
	})
}

// files adds a content-named config per file. Configs are immutable, so a
// changed file is a new config and only the services mounting it roll.
func (b *builder) files(cs *swarm.ContainerSpec, files []manifest.File, field string) error {
	for i, f := range files {
		data := []byte(f.Content)
		if f.Path != "" {
			repo, ok := b.in.RepositoryFiles[f.Path]
			if !ok {
				return &Error{Code: CodeInvalidInput, Object: fmt.Sprintf("%s.files[%d].path", field, i), Message: fmt.Sprintf("repository file %q was not captured", f.Path)}
			}
			data = repo
		}
		mode := os.FileMode(DefaultFileMode)
		if f.Mode != "" {
			m, err := strconv.ParseUint(f.Mode, 8, 32)
			if err != nil || m > 0o777 {
				return &Error{Code: CodeInvalidInput, Object: fmt.Sprintf("%s.files[%d].mode", field, i), Message: fmt.Sprintf("mode %q is not octal 0000-0777", f.Mode)}
			}
			mode = os.FileMode(m)
		}
		name := ObjectName(b.short, "file-"+shortHash(string(data), 16))
		b.configs[name] = swarm.ConfigSpec{
			Annotations: swarm.Annotations{Name: name, Labels: b.labels(map[string]string{LabelRole: "file"})},
			Data:        data,
		}
		cs.Configs = append(cs.Configs, &swarm.ConfigReference{
			File:       &swarm.ConfigReferenceFileTarget{Name: f.Target, UID: "0", GID: "0", Mode: mode},
			ConfigName: name,
		})
	}
	return nil
}

// secretMounts adds content-named secrets: a new value is a new secret.
func (b *builder) secretMounts(cs *swarm.ContainerSpec, mounts []manifest.SecretMount, field string) error {
	for i, m := range mounts {
		v, ok := b.in.Secrets[m.Name]
		if !ok {
			return &Error{Code: CodeSecretMissing, Object: fmt.Sprintf("%s.secrets[%d].name", field, i), Message: fmt.Sprintf("secret %q has no captured value", m.Name)}
		}
		name := ObjectName(b.short, "sec-"+sanitize(m.Name)+"-"+shortHash(string(v.Value), 12))
		if len(name) > 64 {
			name = ObjectName(b.short, "sec-"+shortHash(m.Name+"\x00"+string(v.Value), 16))
		}
		b.secrets[name] = swarm.SecretSpec{
			Annotations: swarm.Annotations{Name: name, Labels: b.labels(map[string]string{"dev.slipway.secret": m.Name, "dev.slipway.secret-version": v.Version})},
			Data:        v.Value,
		}
		cs.Secrets = append(cs.Secrets, &swarm.SecretReference{
			File:       &swarm.SecretReferenceFileTarget{Name: strings.TrimPrefix(m.Target, secretsDir), UID: "0", GID: "0", Mode: 0o444},
			SecretName: name,
		})
	}
	return nil
}

func (b *builder) job(field string, job manifest.Job, st DesiredState) (JobSpec, error) {
	svc, ok := st.Service(job.Service)
	if !ok {
		return JobSpec{}, &Error{Code: CodeInvalidInput, Object: field + ".service", Message: fmt.Sprintf("job %q names unknown service %q", job.Name, job.Service)}
	}
	var msvc manifest.Service
	for _, s := range b.in.Manifest.Spec.Services {
		if s.Name == job.Service {
			msvc = s
		}
	}
	src := svc.Spec.TaskTemplate.ContainerSpec
	cs := &swarm.ContainerSpec{
		Image:   src.Image,
		Command: src.Command,
		Args:    src.Args,
		Env:     envList(msvc.Environment, job.Environment),
		// Health checks do not apply to jobs, not even the image's own.
		Healthcheck:     &container.HealthConfig{Test: []string{"NONE"}},
		StopGracePeriod: src.StopGracePeriod,
		Privileges:      confined(),
	}
	if len(job.Command) > 0 {
		cs.Command, cs.Args = job.Command, nil
	}
	exclusive := job.VolumeAccess == manifest.VolumeAccessExcl
	for _, m := range src.Mounts {
		m.ReadOnly = m.ReadOnly || !exclusive
		cs.Mounts = append(cs.Mounts, m)
	}
	for _, c := range src.Configs {
		if c.File != nil && c.File.Name == probe.Path {
			continue
		}
		cs.Configs = append(cs.Configs, c)
	}
	cs.Secrets = append(cs.Secrets, src.Secrets...)
	if err := b.secretMounts(cs, job.Secrets, field); err != nil {
		return JobSpec{}, err
	}

	var stop []string
	if job.StopService {
		stop = append(stop, job.Service)
	}
	if exclusive {
		for _, other := range st.Services {
			if sharesVolume(other.WritableVolumes, svc.WritableVolumes) && !(job.StopService && other.Service == job.Service) {
				stop = append(stop, other.Service)
			}
		}
	}

	name := JobServiceName(b.short, b.in.DeploymentID, job.Name)
	labels := b.labels(map[string]string{LabelService: job.Service, LabelJob: job.Name, LabelDeployment: b.in.DeploymentID})
	cs.Labels = copyLabels(labels)
	one := uint64(1)
	spec := swarm.ServiceSpec{
		Annotations: swarm.Annotations{Name: name, Labels: labels},
		TaskTemplate: swarm.TaskSpec{
			ContainerSpec: cs,
			Resources:     svc.Spec.TaskTemplate.Resources,
			// One attempt: a failed job fails the deployment.
			RestartPolicy: &swarm.RestartPolicy{Condition: swarm.RestartPolicyConditionNone},
			// On its service's volumes' node, like the service.
			Placement: svc.Spec.TaskTemplate.Placement,
			// No alias: a job does not answer for its service's name.
			Networks: append([]swarm.NetworkAttachmentConfig{{Target: NetworkName(b.short)}}, linkAttachmentsFor(b.in.JobLinks, job.Service, true)...),
		},
		Mode:         swarm.ServiceMode{ReplicatedJob: &swarm.ReplicatedJob{MaxConcurrent: &one, TotalCompletions: &one}},
		EndpointSpec: &swarm.EndpointSpec{Mode: swarm.ResolutionModeDNSRR},
	}
	spec.Labels[LabelSpecHash] = specHash(spec)
	return JobSpec{
		Job:          job.Name,
		Service:      job.Service,
		Timeout:      time.Duration(job.TimeoutSeconds.Or(DefaultJobTimeout)) * time.Second,
		StopServices: stop,
		Spec:         spec,
	}, nil
}

// placement pins a task to the nodes of its volumes; nil when none.
func placement(constraints []string) *swarm.Placement {
	if len(constraints) == 0 {
		return nil
	}
	return &swarm.Placement{Constraints: constraints}
}

func sharesVolume(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// confined is every tenant container's privileges: it cannot gain any
// through setuid binaries or file capabilities (no-new-privileges). Swarm
// has no privileged mode, and no ContainerSpec built here adds
// capabilities, uses the host's network or namespaces, or binds anything
// of the host but a telemetry directory (checkConfined). Engines whose
// Swarm API predates Privileges.NoNewPrivileges (Docker 20.10) ignore the
// field: docs/security.md says what to set on them instead.
func confined() *swarm.Privileges {
	return &swarm.Privileges{NoNewPrivileges: true}
}

// resources are a service's limits and reservations: the manifest's CPU
// and memory both limit the service and reserve that much on the node it
// is placed on (so Swarm places no more than a node holds), except those
// the daemon filled in as defaults (LimitOnly); memory is limited to the
// default when the manifest sets none; processes are always limited.
func (b *builder) resources(svc manifest.Service) *swarm.ResourceRequirements {
	pids := b.in.PidsLimit
	if pids <= 0 {
		pids = DefaultPidsLimit
	}
	mem := b.in.DefaultMemoryBytes
	if mem <= 0 {
		mem = DefaultMemoryLimit
	}
	rr := &swarm.ResourceRequirements{Limits: &swarm.Limit{MemoryBytes: mem, Pids: pids}}
	r := svc.Resources
	if r == nil {
		return rr
	}
	only := b.in.LimitOnly[svc.Name]
	var reserve swarm.Resources
	if cpu := r.CPUMillis.Or(0); cpu > 0 {
		rr.Limits.NanoCPUs = cpu * 1_000_000
		if !only.CPU {
			reserve.NanoCPUs = rr.Limits.NanoCPUs
		}
	}
	if m := r.MemoryBytes.Or(0); m > 0 {
		rr.Limits.MemoryBytes = m
		if !only.Memory {
			reserve.MemoryBytes = m
		}
	}
	if reserve.NanoCPUs > 0 || reserve.MemoryBytes > 0 {
		rr.Reservations = &reserve
	}
	return rr
}

// envList merges maps into sorted KEY=value pairs; later maps win.
func envList(maps ...map[string]string) []string {
	merged := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			merged[k] = v
		}
	}
	if len(merged) == 0 {
		return nil
	}
	out := make([]string, 0, len(merged))
	for k, v := range merged {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// sanitize keeps the characters Swarm allows in object names.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, s)
}

func copyLabels(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+4)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func durationPtr(d time.Duration) *time.Duration { return &d }

func sortedValues[T any](m map[string]T, key func(T) string) []T {
	out := make([]T, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return key(out[i]) < key(out[j]) })
	return out
}

// restartPolicy is every service's: restart on any exit, 5 s apart, at most
// RestartMaxAttempts times in RestartWindow.
func restartPolicy() *swarm.RestartPolicy {
	attempts := uint64(RestartMaxAttempts)
	return &swarm.RestartPolicy{Condition: swarm.RestartPolicyConditionAny, Delay: durationPtr(5 * time.Second),
		MaxAttempts: &attempts, Window: durationPtr(RestartWindow)}
}
