package convert

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/slipwayhq/slipway/manifest"
)

var varNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,62}$`)

// Check is the importers' own guard that what they built is a valid native
// manifest. It covers what a translation can get wrong from arbitrary input
// (names, references between parts, paths, ranges); it is not the manifest
// engine's validator, which the importer package also runs when available.
func Check(m *manifest.Manifest) manifest.Errors {
	var errs manifest.Errors
	bad := func(path, code, format string, args ...any) {
		errs = append(errs, manifest.FieldError{Path: path, Code: code, Message: fmt.Sprintf(format, args...)})
	}
	if !ValidName(m.Metadata.Name) {
		bad("metadata.name", "name_invalid", "%q is not a valid application name", m.Metadata.Name)
	}
	volumes := map[string]bool{}
	for i, v := range m.Spec.Volumes {
		p := fmt.Sprintf("spec.volumes[%d].name", i)
		if !ValidName(v.Name) || volumes[v.Name] {
			bad(p, "volume_name_invalid", "%q is invalid or duplicated", v.Name)
		}
		volumes[v.Name] = true
	}
	services := map[string]*manifest.Service{}
	for i := range m.Spec.Services {
		s := &m.Spec.Services[i]
		if !ValidName(s.Name) || services[s.Name] != nil {
			bad(fmt.Sprintf("spec.services[%d].name", i), "service_name_invalid", "%q is invalid or duplicated", s.Name)
		}
		services[s.Name] = s
	}
	if len(m.Spec.Services) > 64 || len(m.Spec.Volumes) > 64 || len(m.Spec.Routes) > 64 || len(m.Spec.Jobs) > 16 || len(m.Spec.Secrets) > 64 {
		bad("spec", "budget_exceeded", "too many services, volumes, routes, jobs or secrets")
	}
	for i := range m.Spec.Services {
		checkService(&m.Spec.Services[i], fmt.Sprintf("spec.services[%d]", i), services, volumes, bad)
	}
	if cyc := dependencyCycle(m.Spec.Services); cyc != "" {
		bad("spec.services", "dependency_cycle", "depends_on forms a cycle through %s", cyc)
	}
	routeNames := map[string]bool{}
	for i, r := range m.Spec.Routes {
		p := fmt.Sprintf("spec.routes[%d]", i)
		if r.Name != "" && (!ValidName(r.Name) || routeNames[r.Name]) {
			bad(p+".name", "route_name_invalid", "%q is invalid or duplicated", r.Name)
		}
		routeNames[r.Name] = true
		if _, err := CheckHostname(r.Hostname, true); err != nil {
			bad(p+".hostname", "hostname_invalid", "%v", err)
		}
		if r.Visibility != "" && r.Visibility != manifest.VisibilityPublic && r.Visibility != manifest.VisibilityPrivate {
			bad(p+".visibility", "visibility_invalid", "%q", r.Visibility)
		}
		switch {
		case r.Redirect != nil:
			if r.Service != "" || !strings.HasPrefix(r.Redirect.To, "http") {
				bad(p+".redirect", "redirect_invalid", "a redirect needs an http(s) URL and no service")
			}
		case services[r.Service] == nil:
			bad(p+".service", "route_service_missing", "service %q is not declared", r.Service)
		case r.Port < 1 || r.Port > 65535:
			bad(p+".port", "route_port_invalid", "port %d is outside 1-65535", r.Port)
		}
	}
	jobNames := map[string]bool{}
	for i, j := range m.Spec.Jobs {
		p := fmt.Sprintf("spec.jobs[%d]", i)
		if !ValidName(j.Name) || jobNames[j.Name] {
			bad(p+".name", "job_name_invalid", "%q is invalid or duplicated", j.Name)
		}
		jobNames[j.Name] = true
		if services[j.Service] == nil {
			bad(p+".service", "job_service_missing", "service %q is not declared", j.Service)
		}
		if t := j.TimeoutSeconds; t != nil && !t.IsRef() && (t.N < 1 || t.N > 86400) {
			bad(p+".timeout_seconds", "job_timeout_invalid", "%d is outside 1-86400", t.N)
		}
		checkEnv(j.Environment, p+".environment", bad)
	}
	secretNames := map[string]bool{}
	for i, s := range m.Spec.Secrets {
		p := fmt.Sprintf("spec.secrets[%d]", i)
		if !ValidName(s.Name) || secretNames[s.Name] {
			bad(p+".name", "secret_name_invalid", "%q is invalid or duplicated", s.Name)
		}
		secretNames[s.Name] = true
		if s.Generate.Type == manifest.GenerateRandom && (s.Generate.Bytes < 16 || s.Generate.Bytes > 512) {
			bad(p+".generate.bytes", "secret_generate_invalid", "random secrets use 16-512 bytes")
		}
	}
	for k := range m.Spec.Variables {
		if !varNameRE.MatchString(k) {
			bad("spec.variables."+k, "variable_name_invalid", "%q is not a valid variable name", k)
		}
	}
	return errs
}

func checkService(s *manifest.Service, p string, services map[string]*manifest.Service, volumes map[string]bool, bad func(string, string, string, ...any)) {
	switch s.Source.Type {
	case manifest.SourceImage:
		if _, err := CheckImage(s.Source.Image); err != nil {
			bad(p+".source.image", "image_invalid", "%v", err)
		}
	case manifest.SourceGit:
		if s.Source.Repository == nil || s.Source.Build == nil {
			bad(p+".source", "source_invalid", "a git source needs a repository and a build")
		}
	default:
		bad(p+".source.type", "source_type_invalid", "%q", s.Source.Type)
	}
	if r := s.Replicas; r != nil && !r.IsRef() && (r.N < 0 || r.N > 100) {
		bad(p+".replicas", "replicas_invalid", "%d is outside 0-100", r.N)
	}
	checkEnv(s.Environment, p+".environment", bad)
	targets := map[string]bool{}
	target := func(path, t string) {
		clean, err := CleanPath(t)
		if err != nil || clean != t || targets[t] {
			bad(path, "target_invalid", "%q is not a normalized, unique absolute path", t)
		}
		targets[t] = true
	}
	for i, mnt := range s.Mounts {
		if !volumes[mnt.Volume] {
			bad(fmt.Sprintf("%s.mounts[%d].volume", p, i), "volume_missing", "volume %q is not declared", mnt.Volume)
		}
		target(fmt.Sprintf("%s.mounts[%d].target", p, i), mnt.Target)
	}
	for i, sec := range s.Secrets {
		tp := fmt.Sprintf("%s.secrets[%d].target", p, i)
		target(tp, sec.Target)
		if !strings.HasPrefix(sec.Target, "/run/secrets/") {
			bad(tp, "secret_target_invalid", "%q is not under /run/secrets", sec.Target)
		}
		if !ValidName(sec.Name) && !strings.Contains(sec.Name, "${{") {
			bad(fmt.Sprintf("%s.secrets[%d].name", p, i), "secret_name_invalid", "%q", sec.Name)
		}
	}
	for i, f := range s.Files {
		target(fmt.Sprintf("%s.files[%d].target", p, i), f.Target)
		if f.Content == "" && f.Path == "" {
			bad(fmt.Sprintf("%s.files[%d].content", p, i), "file_empty", "file content is empty")
		}
	}
	if h := s.Healthcheck; h != nil {
		switch h.Type {
		case manifest.HealthcheckHTTP:
			if h.Port == nil || (!h.Port.IsRef() && (h.Port.N < 1 || h.Port.N > 65535)) {
				bad(p+".healthcheck.port", "healthcheck_port_invalid", "an HTTP check needs a port in 1-65535")
			}
			if h.Path != "" && !strings.HasPrefix(h.Path, "/") {
				bad(p+".healthcheck.path", "healthcheck_path_invalid", "%q is not absolute", h.Path)
			}
		case manifest.HealthcheckCommand:
			if len(h.Command) == 0 {
				bad(p+".healthcheck.command", "healthcheck_command_missing", "a command check needs a command")
			}
		default:
			bad(p+".healthcheck.type", "healthcheck_type_invalid", "%q", h.Type)
		}
		interval, timeout := h.IntervalSeconds.Or(10), h.TimeoutSeconds.Or(3)
		if interval < 1 || interval > 3600 || timeout < 1 || timeout > interval || h.StartPeriodSeconds.Or(0) < 0 || h.StartPeriodSeconds.Or(0) > 3600 {
			bad(p+".healthcheck", "healthcheck_timing_invalid", "interval 1-3600, timeout 1-interval, start period 0-3600")
		}
		if r := h.Retries.Or(3); r < 1 || r > 100 {
			bad(p+".healthcheck.retries", "healthcheck_retries_invalid", "%d is outside 1-100", r)
		}
	}
	if r := s.Resources; r != nil {
		if r.CPUMillis == nil && r.MemoryBytes == nil {
			bad(p+".resources", "resources_empty", "set cpu_millis, memory_bytes or both")
		}
		if r.CPUMillis.Or(1) < 1 || r.CPUMillis.Or(1) > 1048576 || r.MemoryBytes.Or(1) < 1 {
			bad(p+".resources", "resources_invalid", "limits out of range")
		}
	}
	for i, d := range s.DependsOn {
		if services[d] == nil || d == s.Name {
			bad(fmt.Sprintf("%s.depends_on[%d]", p, i), "dependency_missing", "%q is not another declared service", d)
		}
	}
	for _, list := range [][]string{s.Command, s.Arguments} {
		if len(list) > 128 {
			bad(p+".command", "command_too_long", "more than 128 elements")
		}
	}
}

func checkEnv(env map[string]string, p string, bad func(string, string, string, ...any)) {
	if len(env) > 256 {
		bad(p, "environment_too_large", "more than 256 entries")
	}
	for k, v := range env {
		if !ValidEnvKey(k) || strings.ContainsRune(v, 0) || len(v) > 65536 {
			bad(p+"."+k, "environment_invalid", "invalid name or value")
		}
	}
}

func dependencyCycle(services []manifest.Service) string {
	deps := map[string][]string{}
	for _, s := range services {
		deps[s.Name] = s.DependsOn
	}
	state := map[string]int{}
	var visit func(string) string
	visit = func(n string) string {
		switch state[n] {
		case 1:
			return n
		case 2:
			return ""
		}
		state[n] = 1
		for _, d := range deps[n] {
			if c := visit(d); c != "" {
				return c
			}
		}
		state[n] = 2
		return ""
	}
	for _, s := range services {
		if c := visit(s.Name); c != "" {
			return c
		}
	}
	return ""
}
