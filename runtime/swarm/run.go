package swarm

import (
	"context"

	"strconv"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/api/types/volume"
)

// LabelRun marks a one-off run (a scheduled job's run, a backup's or a
// restore's containers) and the secrets and helper volume made for it.
// Deployments leave such services and what they mount to the run's worker,
// which removes them with RemoveRun.
const LabelRun = "dev.slipway.run"

// Paths inside one-off run containers.
const (
	ArchiveDir       = "/data"
	ArchiveSocket    = "/run/slipway/archive.sock"
	archiveTokenFile = "slipway-archive-token"
	pgpassFile       = "slipway-pgpass"
	// PostgresDumpDir holds the dump pg_dump writes and pg_restore reads.
	PostgresDumpDir  = "/backup"
	PostgresDumpFile = PostgresDumpDir + "/dump"
)

// keepMounted marks the configs and secrets a one-off run mounts as
// wanted, so a deployment never pulls them from under it.
func keepMounted(s swarm.Service, cfg, sec map[string]bool) {
	cs := s.Spec.TaskTemplate.ContainerSpec
	if cs == nil {
		return
	}
	for _, c := range cs.Configs {
		cfg[c.ConfigName] = true
	}
	for _, r := range cs.Secrets {
		sec[r.SecretName] = true
	}
}

// RunContext identifies one one-off run of an environment. Constraints
// are Swarm placement constraints (such as node.id==<id>) pinning its
// containers: the node holding the volume they mount.
type RunContext struct {
	TeamID, AppID     string
	EnvID, EnvShortID string
	RunID             string
	Constraints       []string
}

func (c RunContext) labels(extra map[string]string) map[string]string {
	l := map[string]string{LabelManaged: "true", LabelTeam: c.TeamID, LabelApp: c.AppID, LabelEnv: c.EnvID, LabelRun: c.RunID}
	for k, v := range extra {
		l[k] = v
	}
	return l
}

// Env is the environment the run belongs to.
func (c RunContext) Env() EnvRef { return EnvRef{ID: c.EnvID, ShortID: c.EnvShortID} }

// RunServiceName names a run's service: slw-<env>-<what>-<run hash>.
func RunServiceName(envShortID, what, runID string) string {
	return ObjectName(envShortID, what+"-"+shortHash(runID, 10))
}

// RunVolumeName names a run's helper volume.
func RunVolumeName(envShortID, runID string) string {
	return ObjectName(envShortID, "run-"+shortHash(runID, 10))
}

// ScheduledRun is one run of a scheduled job of the environment's current
// deployment: the job's spec, named and labelled after the run.
func ScheduledRun(job JobSpec, c RunContext) JobSpec {
	run := job
	spec := job.Spec
	spec.Annotations.Name = RunServiceName(c.EnvShortID, "run-"+job.Job, c.RunID)
	spec.Labels = copyLabels(job.Spec.Labels)
	spec.Labels[LabelRun] = c.RunID
	cs := *job.Spec.TaskTemplate.ContainerSpec
	cs.Labels = copyLabels(spec.Labels)
	spec.TaskTemplate.ContainerSpec = &cs
	if len(c.Constraints) > 0 {
		spec.TaskTemplate.Placement = placement(c.Constraints)
	}
	run.Spec = spec
	return run
}

// oneOff is a replicated job of one task that is never restarted.
func oneOff(c RunContext, name, what string, cs *swarm.ContainerSpec, networks []swarm.NetworkAttachmentConfig, timeout time.Duration) JobSpec {
	one := uint64(1)
	labels := c.labels(map[string]string{LabelJob: what})
	cs.Labels = copyLabels(labels)
	cs.Healthcheck = &container.HealthConfig{Test: []string{"NONE"}}
	cs.StopGracePeriod = durationPtr(DefaultStopGracePeriod)
	return JobSpec{Job: what, Timeout: timeout, Spec: swarm.ServiceSpec{
		Annotations: swarm.Annotations{Name: name, Labels: labels},
		TaskTemplate: swarm.TaskSpec{
			ContainerSpec: cs,
			RestartPolicy: &swarm.RestartPolicy{Condition: swarm.RestartPolicyConditionNone},
			Placement:     placement(c.Constraints),
			Networks:      networks,
		},
		Mode:         swarm.ServiceMode{ReplicatedJob: &swarm.ReplicatedJob{MaxConcurrent: &one, TotalCompletions: &one}},
		EndpointSpec: &swarm.EndpointSpec{Mode: swarm.ResolutionModeDNSRR},
	}}
}

// runSecret is a secret only this run mounts.
func runSecret(c RunContext, what string, data []byte) swarm.SecretSpec {
	name := ObjectName(c.EnvShortID, what+"-"+shortHash(c.RunID, 10))
	return swarm.SecretSpec{Annotations: swarm.Annotations{Name: name, Labels: c.labels(nil)}, Data: data}
}

// Archiver modes.
const (
	ArchiveSend    = "send"
	ArchiveReceive = "receive"
)

// ArchiverInput describes a run of `slipway archive send|receive` over a
// Docker volume, talking to the worker on a unix socket it bind-mounts.
type ArchiverInput struct {
	Image string
	// Mode is ArchiveSend (backup: the volume is mounted read-only) or
	// ArchiveReceive (restore: its contents are replaced).
	Mode string
	// Volume is the Docker volume name.
	Volume string
	// SocketPath is the worker's socket on the node's file system.
	SocketPath string
	Token      []byte
	Timeout    time.Duration
}

// ArchiverRun returns the run's job and the secret holding its token.
func ArchiverRun(c RunContext, in ArchiverInput) (JobSpec, swarm.SecretSpec) {
	secret := runSecret(c, "archive-token", in.Token)
	cs := &swarm.ContainerSpec{
		Image: in.Image,
		Command: []string{"/slipway", "archive", in.Mode, "--dir", ArchiveDir, "--url", "unix://" + ArchiveSocket,
			"--token-file", secretsDir + archiveTokenFile},
		Mounts: []mount.Mount{
			{Type: mount.TypeVolume, Source: in.Volume, Target: ArchiveDir, ReadOnly: in.Mode == ArchiveSend},
			{Type: mount.TypeBind, Source: in.SocketPath, Target: ArchiveSocket},
		},
		Secrets: []*swarm.SecretReference{{SecretName: secret.Name,
			File: &swarm.SecretReferenceFileTarget{Name: archiveTokenFile, UID: "0", GID: "0", Mode: 0o400}}},
		// The archiver keeps owners and modes, which only root can set.
		User: "0:0",
	}
	return oneOff(c, RunServiceName(c.EnvShortID, "archive", c.RunID), "archive-"+in.Mode, cs, nil, in.Timeout), secret
}

// Postgres tool modes.
const (
	PostgresDump    = "dump"
	PostgresRestore = "restore"
)

// PostgresInput describes a pg_dump or pg_restore run in the Postgres
// service's own image, reaching the server by its service name on the
// environment's network.
type PostgresInput struct {
	// Service is the Postgres service's desired spec (its image).
	Service  ServiceSpec
	Mode     string
	Database string
	User     string
	Port     int64
	// Password is the role's password; nil connects without one.
	Password []byte
	// HelperVolume holds the dump file.
	HelperVolume string
	Timeout      time.Duration
}

// PostgresRun returns the run's job and the secrets it mounts (a pgpass
// file when a password is given). pg_dump writes the custom format, which
// pg_restore replays with --clean, dropping what the dump recreates.
func PostgresRun(c RunContext, in PostgresInput) (JobSpec, []swarm.SecretSpec) {
	conn := []string{"--host", in.Service.Service, "--port", strconv.FormatInt(in.Port, 10), "--username", in.User,
		"--dbname", in.Database, "--no-password"}
	var cmd []string
	if in.Mode == PostgresDump {
		cmd = append([]string{"pg_dump", "--format", "custom", "--file", PostgresDumpFile}, conn...)
	} else {
		cmd = append(append([]string{"pg_restore", "--clean", "--if-exists", "--no-owner", "--exit-on-error"}, conn...), PostgresDumpFile)
	}
	cs := &swarm.ContainerSpec{
		Image:   in.Service.Spec.TaskTemplate.ContainerSpec.Image,
		Command: cmd,
		Mounts:  []mount.Mount{{Type: mount.TypeVolume, Source: in.HelperVolume, Target: PostgresDumpDir}},
		// Client tools only: root reads the 0400 pgpass file and writes the
		// helper volume whatever user the image's server runs as.
		User: "0:0",
	}
	var secrets []swarm.SecretSpec
	if in.Password != nil {
		s := runSecret(c, "pgpass", []byte("*:*:*:*:"+pgpassEscape(string(in.Password))+"\n"))
		secrets = append(secrets, s)
		cs.Secrets = []*swarm.SecretReference{{SecretName: s.Name,
			File: &swarm.SecretReferenceFileTarget{Name: pgpassFile, UID: "0", GID: "0", Mode: 0o400}}}
		cs.Env = []string{"PGPASSFILE=" + secretsDir + pgpassFile}
	}
	networks := []swarm.NetworkAttachmentConfig{{Target: NetworkName(c.EnvShortID)}}
	return oneOff(c, RunServiceName(c.EnvShortID, "pg-"+in.Mode, c.RunID), "pg-"+in.Mode, cs, networks, in.Timeout), secrets
}

// pgpassEscape escapes what a .pgpass field cannot hold as is.
func pgpassEscape(s string) string {
	s = strings.TrimRight(s, "\r\n")
	return strings.NewReplacer(`\`, `\\`, `:`, `\:`).Replace(s)
}

// EnsureRunObjects creates a run's secrets and helper volumes.
func (d *Driver) EnsureRunObjects(ctx context.Context, c RunContext, secrets []swarm.SecretSpec, volumes []string) error {
	desired := DesiredState{EnvID: c.EnvID, Secrets: secrets}
	for _, v := range volumes {
		desired.Volumes = append(desired.Volumes, VolumeSpec{Name: v, Labels: c.labels(nil)})
	}
	if err := d.EnsureVolumes(ctx, desired); err != nil {
		return err
	}
	return d.EnsureSecrets(ctx, desired)
}

// RemoveRun removes everything labelled with the run: its services
// (waiting for their containers), then its secrets and helper volumes.
func (d *Driver) RemoveRun(ctx context.Context, env EnvRef, runID string) error {
	byRun := filters.NewArgs(filters.Arg("label", LabelRun+"="+runID), filters.Arg("label", LabelEnv+"="+env.ID))
	services, err := d.engine.ServiceList(ctx, swarm.ServiceListOptions{Filters: byRun})
	if err != nil {
		return engineErr("list run services", err)
	}
	for _, s := range services {
		if err := d.RemoveService(ctx, env, s.Spec.Name); err != nil {
			return err
		}
	}
	// Docker 20.10 keeps the exited containers of a removed replicated
	// job, which would hold its volumes: remove those of this node.
	containers, err := d.engine.ContainerList(ctx, container.ListOptions{All: true, Filters: byRun})
	if err != nil {
		return engineErr("list run containers", err)
	}
	for _, c := range containers {
		if err := d.engine.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true}); err != nil && !cerrdefs.IsNotFound(err) {
			return engineErr("remove run container", err)
		}
	}
	secrets, err := d.engine.SecretList(ctx, swarm.SecretListOptions{Filters: byRun})
	if err != nil {
		return engineErr("list run secrets", err)
	}
	for _, s := range secrets {
		if err := d.removeInUse(ctx, "secret "+s.Spec.Name, func() error { return d.engine.SecretRemove(ctx, s.ID) }); err != nil {
			return err
		}
	}
	vols, err := d.engine.VolumeList(ctx, volume.ListOptions{Filters: byRun})
	if err != nil {
		return engineErr("list run volumes", err)
	}
	for _, v := range vols.Volumes {
		if err := d.removeInUse(ctx, "volume "+v.Name, func() error { return d.engine.VolumeRemove(ctx, v.Name, false) }); err != nil {
			return err
		}
	}
	return nil
}

// RunningRun reports whether the run's service still exists.
func (d *Driver) RunningRun(ctx context.Context, env EnvRef, runID string) (bool, error) {
	byRun := filters.NewArgs(filters.Arg("label", LabelRun+"="+runID), filters.Arg("label", LabelEnv+"="+env.ID))
	services, err := d.engine.ServiceList(ctx, swarm.ServiceListOptions{Filters: byRun})
	if err != nil {
		return false, engineErr("list run services", err)
	}
	return len(services) > 0, nil
}
