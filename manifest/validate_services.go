package manifest

import (
	"sort"
	"strings"
)

// ReservedEnvironmentKeys are injected by Slipway and cannot be set.
var ReservedEnvironmentKeys = []string{"SLIPWAY_INGRESS_PROXIES", "PIQUELD_INGRESS_PROXIES"}

func (v *validator) services() {
	svcs := v.m.Spec.Services
	v.budget("spec.services", len(svcs), MaxServices, "services per application")
	seen := make(map[string]bool, len(svcs))
	receivers := 0
	fileBytes := 0
	for i := range svcs {
		s := &svcs[i]
		p := joinIndex("spec.services", i)
		v.name(p+".name", s.Name, "service name")
		if seen[s.Name] && s.Name != "" {
			v.add(p+".name", "service_name_duplicate", "service %q is declared more than once", s.Name)
		}
		seen[s.Name] = true
		v.source(p+".source", &s.Source)
		replicas, hasReplicas := v.integer(p, ".replicas", s.Replicas)
		if hasReplicas {
			switch {
			case replicas < 0:
				v.add(p+".replicas", "value_out_of_range", "replicas cannot be negative; use 0 to stop the service")
			case replicas > MaxReplicas:
				v.add(p+".replicas", "budget_exceeded", "replicas per service: %d exceeds the limit of %d", replicas, MaxReplicas)
			}
		}
		v.environment(p+".environment", s.Environment)
		v.command(p+".command", s.Command)
		v.command(p+".arguments", s.Arguments)
		v.healthcheck(p+".healthcheck", s.Healthcheck)
		v.resources(p+".resources", s.Resources)
		ts := newTargetSet()
		v.mounts(p, s, ts)
		fileBytes += v.files(p, s, ts)
		v.secretMounts(p+".secrets", s.Secrets, ts)
		v.nestedTargets(ts)
		v.rollout(p+".rollout", s.Rollout)
		v.postgres(p+".postgres", s)
		if s.ReceivesTelemetry {
			receivers++
			if receivers > 1 {
				v.add(p+".receives_telemetry", "telemetry_receiver_duplicate", "only one service per application may receive telemetry")
			}
			if hasReplicas && replicas > 1 {
				v.add(p+".replicas", "telemetry_receiver_replicas", "a telemetry receiver runs at most one replica, since one collector listens on the socket; got %d", replicas)
			}
		}
	}
	if fileBytes > MaxFilesTotalBytes {
		v.add("spec.services", "budget_exceeded", "inline file contents per application: %s bytes exceeds the limit of %s bytes (2 MiB)", formatCount(fileBytes), formatCount(MaxFilesTotalBytes))
	}
	v.dependencies()
}

func (v *validator) source(p string, src *Source) {
	switch src.Type {
	case SourceImage:
		if src.Repository != nil {
			v.add(p+".repository", "source_field_conflict", "repository applies to git sources only; this source has type image")
		}
		if src.Build != nil {
			v.add(p+".build", "source_field_conflict", "build applies to git sources only; this source has type image")
		}
		if v.deferred(src.Image) {
			return
		}
		if _, msg := parseImage(src.Image); msg != "" {
			v.add(p+".image", "image_reference_invalid", "image %s", msg)
		}
	case SourceGit:
		if src.Image != "" {
			v.add(p+".image", "source_field_conflict", "image applies to image sources only; this source has type git")
		}
		v.repository(p+".repository", src.Repository, true)
		v.build(p+".build", src.Build)
	case "":
		v.add(p+".type", "field_required", "source type is required: image or git")
	default:
		v.add(p+".type", "source_type_invalid", "unsupported source type %q; use image or git", src.Type)
	}
}

// repository checks a Git repository; allowSelf says whether "self" may be
// used here.
func (v *validator) repository(p string, r *Repository, allowSelf bool) {
	switch {
	case r == nil:
		v.add(p, "field_required", "repository is required: a table with url and branch or commit, or \"self\"")
		return
	case r.Self && !allowSelf:
		v.add(p, "manifest_repository_invalid", "the manifest repository cannot be \"self\"; give its url")
		return
	case r.Self:
		if !v.repoBacked {
			v.add(p, "self_requires_repository", "repository = \"self\" builds from the manifest's own repository; add [spec.manifest] or give a repository url")
		}
		return
	}
	if msg := checkGitURL(r.URL); msg != "" {
		v.add(p+".url", "repository_url_invalid", "repository url %s", msg)
	}
	if r.Branch == "" && r.Commit == "" {
		v.add(p+".branch", "field_required", "set branch, commit, or both")
	}
	if r.Branch != "" {
		if msg := checkBranch(r.Branch); msg != "" {
			v.add(p+".branch", "branch_invalid", "branch %s", msg)
		}
	}
	if r.Commit != "" {
		if msg := checkCommit(r.Commit); msg != "" {
			v.add(p+".commit", "commit_invalid", "commit %s", msg)
		}
	}
}

func (v *validator) build(p string, b *Build) {
	if b == nil {
		v.add(p, "field_required", "git sources need a build table with type = \"docker\"")
		return
	}
	switch b.Type {
	case "docker":
	case "":
		v.add(p+".type", "field_required", "build type is required: docker")
	default:
		v.add(p+".type", "build_type_invalid", "unsupported build type %q; use docker", b.Type)
	}
	if b.Dockerfile != "" && !v.deferred(b.Dockerfile) {
		if msg := checkRepoPath(b.Dockerfile, false); msg != "" {
			v.add(p+".dockerfile", "build_path_invalid", "dockerfile %s", msg)
		}
	}
	if b.Context != "" && !v.deferred(b.Context) {
		if msg := checkRepoPath(b.Context, true); msg != "" {
			v.add(p+".context", "build_path_invalid", "context %s", msg)
		}
	}
	if b.Target != "" && !v.deferred(b.Target) && !dockerStage.MatchString(b.Target) {
		v.add(p+".target", "build_target_invalid", "target %s is not a valid stage name", quoteValue(b.Target))
	}
	total := 0
	for _, k := range sortedKeys(b.Args) {
		kp := joinKey(p+".args", k)
		if msg := checkEnvKey(k); msg != "" {
			v.add(kp, "build_arg_invalid", "build argument %s", msg)
		}
		val := b.Args[k]
		total += len(k) + len(val)
		if v.deferred(val) {
			continue
		}
		if msg := controlProblem(val, true); msg != "" || strings.ContainsRune(val, 0) {
			v.add(kp, "build_arg_invalid", "build argument %s value %s", k, msg)
		}
	}
	if total > MaxBuildArgsTotalBytes {
		v.add(p+".args", "budget_exceeded", "build arguments: %s bytes in total exceeds the limit of %s bytes (256 KiB)", formatCount(total), formatCount(MaxBuildArgsTotalBytes))
	}
}

// environment checks an environment map of a service or a job.
func (v *validator) environment(p string, env map[string]string) {
	if len(env) == 0 {
		return
	}
	v.budget(p, len(env), MaxEnvironmentEntries, "environment entries")
	for _, k := range sortedKeys(env) {
		kp := joinKey(p, k)
		if msg := checkEnvKey(k); msg != "" {
			v.add(kp, "environment_key_invalid", "environment variable %s", msg)
		} else if len(k) > MaxEnvironmentKeyBytes {
			v.add(kp, "budget_exceeded", "environment key %s: %d bytes exceeds the limit of %d bytes", quoteValue(k[:32]+"…"), len(k), MaxEnvironmentKeyBytes)
		}
		for _, r := range ReservedEnvironmentKeys {
			if k == r {
				v.add(kp, "environment_key_reserved", "%s is reserved: Slipway sets it on routed services", k)
			}
		}
		val := env[k]
		if len(val) > MaxEnvironmentValue {
			v.add(kp, "budget_exceeded", "environment value of %s: %s bytes exceeds the limit of %s bytes", k, formatCount(len(val)), formatCount(MaxEnvironmentValue))
			continue
		}
		if v.deferred(val) {
			continue
		}
		if msg := controlProblem(val, true); msg != "" {
			v.add(kp, "environment_value_invalid", "the value of %s %s", k, msg)
		}
	}
}

// command checks a command or arguments array.
func (v *validator) command(p string, args []string) {
	if len(args) > MaxCommandElements {
		v.add(p, "budget_exceeded", "%s elements: %d exceeds the limit of %d", lastSegment(p), len(args), MaxCommandElements)
	}
	for i, a := range args {
		if len(a) > MaxCommandElementBytes {
			v.add(joinIndex(p, i), "budget_exceeded", "%s element size: %s bytes exceeds the limit of %s bytes", lastSegment(p), formatCount(len(a)), formatCount(MaxCommandElementBytes))
			continue
		}
		if v.deferred(a) {
			continue
		}
		if msg := controlProblem(a, true); msg != "" {
			v.add(joinIndex(p, i), "command_invalid", "%s", msg)
		}
	}
}

func lastSegment(p string) string {
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// Health-check defaults, also used to compare timeout with interval when
// either is unset.
const (
	DefaultHealthcheckPath     = "/health"
	DefaultHealthcheckInterval = 10
	DefaultHealthcheckTimeout  = 3
	DefaultHealthcheckRetries  = 3
)

func (v *validator) healthcheck(p string, h *Healthcheck) {
	if h == nil {
		return
	}
	switch h.Type {
	case HealthcheckHTTP:
		if h.Port == nil {
			v.add(p+".port", "field_required", "HTTP health checks need the port to probe")
		} else if port, ok := v.integer(p, ".port", h.Port); ok && (port < 1 || port > 65535) {
			v.add(p+".port", "healthcheck_port_invalid", "port must be between 1 and 65535, got %d", port)
		}
		if h.Path != "" && !v.deferred(h.Path) {
			if !strings.HasPrefix(h.Path, "/") {
				v.add(p+".path", "healthcheck_path_invalid", "path %s must be absolute, starting with /", quoteValue(h.Path))
			} else if msg := controlProblem(h.Path, false); msg != "" || strings.ContainsAny(h.Path, " #") {
				v.add(p+".path", "healthcheck_path_invalid", "path %s must be a URL path without spaces, fragments or control characters", quoteValue(h.Path))
			}
		}
		if len(h.Command) > 0 {
			v.add(p+".command", "healthcheck_field_conflict", "command applies to command health checks only; this check has type http")
		}
	case HealthcheckCommand:
		if len(h.Command) == 0 {
			v.add(p+".command", "field_required", "command health checks need a command, such as [\"pg_isready\"]")
		} else if h.Command[0] == "" {
			v.add(joinIndex(p+".command", 0), "command_invalid", "the program to run cannot be empty")
		}
		v.command(p+".command", h.Command)
		if h.Port != nil {
			v.add(p+".port", "healthcheck_field_conflict", "port applies to HTTP health checks only; this check has type command")
		}
		if h.Path != "" {
			v.add(p+".path", "healthcheck_field_conflict", "path applies to HTTP health checks only; this check has type command")
		}
	case "":
		v.add(p+".type", "field_required", "health-check type is required: http or command")
	default:
		v.add(p+".type", "healthcheck_type_invalid", "unsupported health-check type %q; use http or command", h.Type)
	}
	interval, intervalOK := v.integer(p, ".interval_seconds", h.IntervalSeconds)
	if intervalOK {
		v.secondsRange(p+".interval_seconds", interval, 1, MaxHealthcheckInterval, "health-check interval")
	} else if h.IntervalSeconds == nil {
		interval, intervalOK = DefaultHealthcheckInterval, true
	}
	timeout, timeoutOK := v.integer(p, ".timeout_seconds", h.TimeoutSeconds)
	if timeoutOK {
		if timeout < 1 {
			v.add(p+".timeout_seconds", "value_out_of_range", "timeout_seconds must be at least 1, got %d", timeout)
		}
	} else if h.TimeoutSeconds == nil {
		timeout, timeoutOK = DefaultHealthcheckTimeout, true
	}
	if intervalOK && timeoutOK && timeout > interval && interval >= 1 {
		v.add(p+".timeout_seconds", "healthcheck_timeout_exceeds_interval", "timeout_seconds (%d) cannot exceed interval_seconds (%d)", timeout, interval)
	}
	if start, ok := v.integer(p, ".start_period_seconds", h.StartPeriodSeconds); ok {
		v.secondsRange(p+".start_period_seconds", start, 0, MaxHealthcheckStart, "health-check start period")
	}
	if retries, ok := v.integer(p, ".retries", h.Retries); ok {
		v.secondsRange(p+".retries", retries, 1, MaxHealthcheckRetries, "health-check retries")
	}
}

// secondsRange reports a value below min as value_out_of_range and one
// above the budget max as budget_exceeded.
func (v *validator) secondsRange(p string, n, min, max int64, what string) {
	switch {
	case n < min:
		v.add(p, "value_out_of_range", "%s must be at least %d, got %d", what, min, n)
	case n > max:
		v.add(p, "budget_exceeded", "%s: %s exceeds the limit of %s", what, formatCount(int(n)), formatCount(int(max)))
	}
}

func (v *validator) resources(p string, r *Resources) {
	if r == nil {
		return
	}
	if r.CPUMillis == nil && r.MemoryBytes == nil {
		v.add(p, "resources_empty", "resource limits must set cpu_millis, memory_bytes, or both")
		return
	}
	if cpu, ok := v.integer(p, ".cpu_millis", r.CPUMillis); ok {
		v.secondsRange(p+".cpu_millis", cpu, 1, MaxCPUMillis, "CPU limit in millicores")
	}
	if mem, ok := v.integer(p, ".memory_bytes", r.MemoryBytes); ok && mem < MinMemoryBytes {
		v.add(p+".memory_bytes", "value_out_of_range", "memory_bytes must be at least %s (6 MiB, Docker's minimum), got %d", formatCount(MinMemoryBytes), mem)
	}
}

// Target kinds.
const (
	targetMount = "mount"
	targetFile  = "file"
	targetSec   = "secret"
)

type target struct {
	path, kind, field string
}

// targetSet collects one service's (or job's) container targets. They are
// few, so duplicates are found by scanning the list.
type targetSet struct {
	list []target
}

func newTargetSet() *targetSet { return &targetSet{} }

// target checks one container target and records it.
func (v *validator) target(ts *targetSet, field, t, kind string) {
	if msg := checkAbsolutePath(t); msg != "" {
		v.add(field, "target_invalid", "target %s", msg)
		return
	}
	if kind == targetSec {
		if !strings.HasPrefix(t, secretsDir+"/") {
			v.add(field, "secret_target_invalid", "secret targets must be inside %s, got %s", secretsDir, quoteValue(t))
			return
		}
	} else {
		for _, dir := range managedDirs {
			if within(t, dir) || within(dir, t) {
				v.add(field, "target_reserved", "target %s overlaps %s, which Slipway manages; choose another path", quoteValue(t), dir)
				return
			}
		}
	}
	if kind == targetSec {
		for _, dir := range reservedDirs {
			if within(t, dir) {
				v.add(field, "target_reserved", "target %s is inside %s, which Slipway manages", quoteValue(t), dir)
				return
			}
		}
	}
	for _, prev := range ts.list {
		if prev.path == t {
			v.add(field, "target_duplicate", "target %s is already used by %s", quoteValue(t), prev.field)
			return
		}
	}
	ts.list = append(ts.list, target{path: t, kind: kind, field: field})
}

// nestedTargets rejects a file or secret target that is a directory holding
// another target. Files inside a mounted volume's directory are fine.
func (v *validator) nestedTargets(ts *targetSet) {
	if len(ts.list) < 2 {
		return
	}
	sorted := append([]target(nil), ts.list...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].path < sorted[j].path })
	for i, outer := range sorted {
		for _, inner := range sorted[i+1:] {
			if !strings.HasPrefix(inner.path, outer.path) {
				break
			}
			if inner.path[len(outer.path)] != '/' {
				continue
			}
			if outer.kind == targetMount && inner.kind == targetMount {
				continue
			}
			if outer.kind != targetMount {
				v.add(outer.field, "target_nested", "target %s is a directory holding %s (%s); a %s target must be a file", quoteValue(outer.path), quoteValue(inner.path), inner.field, outer.kind)
				break
			}
		}
	}
}

func (v *validator) mounts(p string, s *Service, ts *targetSet) {
	v.budget(p+".mounts", len(s.Mounts), MaxMounts, "mounts per service")
	for j, mt := range s.Mounts {
		mp := joinIndex(p+".mounts", j)
		if mt.Volume == "" {
			v.add(mp+".volume", "field_required", "mounts name a volume declared in spec.volumes")
		} else if !v.volumeNames[mt.Volume] {
			v.add(mp+".volume", "volume_missing", "volume %q is not declared in spec.volumes", mt.Volume)
		}
		v.target(ts, mp+".target", mt.Target, targetMount)
	}
}

// files checks a service's files and returns their inline bytes.
func (v *validator) files(p string, s *Service, ts *targetSet) int {
	v.budget(p+".files", len(s.Files), MaxFiles, "files per service")
	total := 0
	for j, f := range s.Files {
		fp := joinIndex(p+".files", j)
		v.target(ts, fp+".target", f.Target, targetFile)
		switch {
		case f.Path != "" && f.Content != "":
			v.add(fp, "file_source_conflict", "a file has exactly one source: path or content, not both")
		case f.Path != "":
			if !v.repoBacked {
				v.add(fp+".path", "file_requires_repository", "path reads from the manifest's repository; only repository-backed applications (with [spec.manifest]) can use it, use content instead")
			}
			if msg := checkRepoPath(f.Path, false); msg != "" {
				v.add(fp+".path", "file_path_invalid", "path %s", msg)
			}
		case f.Content != "":
		default:
			v.add(fp+".content", "file_empty", "file contents can't be empty; set content, or path for a repository file")
		}
		total += len(f.Content)
		if len(f.Content) > MaxFileBytes {
			v.add(fp+".content", "budget_exceeded", "file size: %s bytes exceeds the limit of %s bytes (500 KiB)", formatCount(len(f.Content)), formatCount(MaxFileBytes))
		}
		if f.Mode != "" && !fileMode.MatchString(f.Mode) {
			v.add(fp+".mode", "file_mode_invalid", "mode %s must be an octal permission from \"0000\" to \"0777\"", quoteValue(f.Mode))
		}
	}
	return total
}

func (v *validator) secretMounts(p string, secrets []SecretMount, ts *targetSet) {
	v.budget(p, len(secrets), MaxSecretMounts, "secret mounts per service")
	for j, sm := range secrets {
		sp := joinIndex(p, j)
		if !v.deferred(sm.Name) {
			v.name(sp+".name", sm.Name, "secret name")
		}
		v.target(ts, sp+".target", sm.Target, targetSec)
	}
}

func (v *validator) rollout(p string, r *Rollout) {
	if r == nil {
		return
	}
	if r.Order != "" && !v.deferred(r.Order) && r.Order != RolloutStartFirst && r.Order != RolloutStopFirst {
		v.add(p+".order", "rollout_order_invalid", "order must be start-first or stop-first, got %q", r.Order)
	}
	if mon, ok := v.integer(p, ".monitor_seconds", r.MonitorSeconds); ok && (mon < 1 || mon > MaxRolloutMonitor) {
		v.add(p+".monitor_seconds", "rollout_monitor_invalid", "monitor_seconds must be between 1 and 3,600 (the rollout monitor budget), got %d", mon)
	}
}
