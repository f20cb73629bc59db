package convert

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/slipwayhq/slipway/manifest"
)

// TextProblem says what makes s unusable as runtime text in Slipway: invalid
// UTF-8, or control characters other than tab, newline and carriage return
// (and those too unless newlines are allowed). Empty when fine.
func TextProblem(s string, allowNewlines bool) string {
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	for _, r := range s {
		if r >= 0x20 && r != 0x7f {
			continue
		}
		if allowNewlines && (r == '\t' || r == '\n' || r == '\r') {
			continue
		}
		return fmt.Sprintf("contains the control character %q", r)
	}
	return ""
}

// CheckHTTPPath validates a health-check path: absolute, origin-form, with no
// whitespace, fragment or control characters.
func CheckHTTPPath(p string) error {
	if p == "" || p[0] != '/' || strings.HasPrefix(p, "//") || strings.ContainsAny(p, " \t#") || TextProblem(p, false) != "" {
		return fmt.Errorf("%q is not an absolute HTTP path", p)
	}
	return nil
}

// Finalize settles what only shows once every part is translated, so the
// result stays valid whatever the input: targets that collide or overlap
// directories Slipway manages, dependency cycles, duplicate route hostnames
// and names, and budgets. Each dropped part is an error at its service's
// source path (where[service name]), or at fallback.
func Finalize(m *manifest.Manifest, d *Diags, where map[string]string, fallback string) {
	at := func(service string) string {
		if p, ok := where[service]; ok {
			return p
		}
		return fallback
	}
	if len(m.Spec.Services) > manifest.MaxServices {
		d.Error(fallback, "Slipway allows at most %d services; the rest were dropped", manifest.MaxServices)
		m.Spec.Services = m.Spec.Services[:manifest.MaxServices]
	}
	for i := range m.Spec.Services {
		finalizeService(&m.Spec.Services[i], d, at(m.Spec.Services[i].Name))
	}
	PruneDependencies(m)
	breakCycles(m, d, at)
	finalizeRoutes(m, d, fallback)
	if len(m.Spec.Volumes) > manifest.MaxVolumes {
		d.Error(fallback, "Slipway allows at most %d volumes; the rest were dropped with their mounts", manifest.MaxVolumes)
		m.Spec.Volumes = m.Spec.Volumes[:manifest.MaxVolumes]
		dropUndeclaredMounts(m)
	}
	if len(m.Spec.Secrets) > manifest.MaxGeneratedSecrets {
		d.Error(fallback, "Slipway allows at most %d generated secrets; the rest were dropped", manifest.MaxGeneratedSecrets)
		m.Spec.Secrets = m.Spec.Secrets[:manifest.MaxGeneratedSecrets]
	}
	if len(m.Spec.Variables) > manifest.MaxVariablesPerTable {
		d.Error(fallback, "Slipway allows at most %d variables", manifest.MaxVariablesPerTable)
	}
	if len(m.Spec.Jobs) > manifest.MaxJobs {
		d.Error(fallback, "Slipway allows at most %d jobs; the rest were dropped", manifest.MaxJobs)
		m.Spec.Jobs = m.Spec.Jobs[:manifest.MaxJobs]
	}
}

// dropUndeclaredMounts removes the mounts of volumes the manifest does not
// declare (any more).
func dropUndeclaredMounts(m *manifest.Manifest) {
	declared := map[string]bool{}
	for _, v := range m.Spec.Volumes {
		declared[v.Name] = true
	}
	for i := range m.Spec.Services {
		s := &m.Spec.Services[i]
		s.Mounts = slices.DeleteFunc(s.Mounts, func(mt manifest.Mount) bool { return !declared[mt.Volume] })
	}
}

var managedDirs = []string{"/run/secrets", "/run/slipway", "/run/piqueld"}

func within(p, dir string) bool {
	return dir == "/" || p == dir || strings.HasPrefix(p, dir+"/")
}

func finalizeService(s *manifest.Service, d *Diags, at string) {
	used := map[string]bool{}
	ok := func(target string, secret bool) bool {
		if used[target] {
			d.Error(at, "%s is mounted twice; the second mount was dropped", target)
			return false
		}
		for _, dir := range managedDirs {
			if !secret && (within(target, dir) || within(dir, target)) {
				d.Error(at, "%s overlaps %s, which Slipway manages; the mount was dropped", target, dir)
				return false
			}
		}
		used[target] = true
		return true
	}
	mounts := s.Mounts[:0]
	for _, mt := range s.Mounts {
		if ok(mt.Target, false) && len(mounts) < manifest.MaxMounts {
			mounts = append(mounts, mt)
		}
	}
	s.Mounts = nilIfEmpty(mounts)
	files := s.Files[:0]
	total := 0
	for _, f := range s.Files {
		total += len(f.Content)
		if len(f.Content) > manifest.MaxFileBytes || total > manifest.MaxFilesTotalBytes || len(files) >= manifest.MaxFiles {
			d.Error(at, "file %s exceeds Slipway's file budget (%d bytes each, %d files); it was dropped", f.Target, manifest.MaxFileBytes, manifest.MaxFiles)
			continue
		}
		if ok(f.Target, false) {
			files = append(files, f)
		}
	}
	s.Files = nilIfEmpty(files)
	secrets := s.Secrets[:0]
	for _, sec := range s.Secrets {
		if ok(sec.Target, true) && len(secrets) < manifest.MaxSecretMounts {
			secrets = append(secrets, sec)
		}
	}
	s.Secrets = nilIfEmpty(secrets)
	// A file or secret target cannot be a directory holding another target.
	targets := make([]string, 0, len(used))
	for t := range used {
		targets = append(targets, t)
	}
	sort.Strings(targets)
	isMount := map[string]bool{}
	for _, mt := range s.Mounts {
		isMount[mt.Target] = true
	}
	for i, outer := range targets {
		if isMount[outer] {
			continue
		}
		for _, inner := range targets[i+1:] {
			if strings.HasPrefix(inner, outer+"/") {
				d.Error(at, "%s is both a file and a directory holding %s; %s was dropped", outer, inner, outer)
				s.Files = dropFile(s.Files, outer)
				s.Secrets = dropSecret(s.Secrets, outer)
				break
			}
		}
	}
	if len(s.Environment) > manifest.MaxEnvironmentEntries {
		d.Error(at, "Slipway allows at most %d environment variables per service", manifest.MaxEnvironmentEntries)
		for _, k := range SortedKeys(s.Environment)[manifest.MaxEnvironmentEntries:] {
			delete(s.Environment, k)
		}
	}
	for k, v := range s.Environment {
		if len(k) > manifest.MaxEnvironmentKeyBytes || len(v) > manifest.MaxEnvironmentValue {
			d.Error(at, "environment variable %.40s exceeds Slipway's size budget; it was dropped", k)
			delete(s.Environment, k)
		}
	}
	if r := s.Resources; r != nil {
		if r.MemoryBytes != nil && r.MemoryBytes.N < manifest.MinMemoryBytes {
			d.Error(at, "a memory limit of %d bytes is below Docker's minimum of %d; the limit was dropped", r.MemoryBytes.N, manifest.MinMemoryBytes)
			r.MemoryBytes = nil
		}
		if r.CPUMillis != nil && (r.CPUMillis.N < 1 || r.CPUMillis.N > manifest.MaxCPUMillis) {
			d.Error(at, "a CPU limit of %d millicores is outside 1-%d; the limit was dropped", r.CPUMillis.N, manifest.MaxCPUMillis)
			r.CPUMillis = nil
		}
		if r.MemoryBytes == nil && r.CPUMillis == nil {
			s.Resources = nil
		}
	}
	s.Command = trimArgs(s.Command, d, at, "command")
	s.Arguments = trimArgs(s.Arguments, d, at, "arguments")
}

func trimArgs(list []string, d *Diags, at, what string) []string {
	for _, a := range list {
		if len(a) > manifest.MaxCommandElementBytes || len(list) > manifest.MaxCommandElements {
			d.Error(at, "the %s exceeds Slipway's budget (%d elements of %d bytes); it was dropped", what, manifest.MaxCommandElements, manifest.MaxCommandElementBytes)
			return nil
		}
	}
	return list
}

func dropFile(list []manifest.File, target string) []manifest.File {
	out := list[:0]
	for _, f := range list {
		if f.Target != target {
			out = append(out, f)
		}
	}
	return nilIfEmpty(out)
}

func dropSecret(list []manifest.SecretMount, target string) []manifest.SecretMount {
	out := list[:0]
	for _, s := range list {
		if s.Target != target {
			out = append(out, s)
		}
	}
	return nilIfEmpty(out)
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// breakCycles drops each dependency that closes a cycle, with an error.
func breakCycles(m *manifest.Manifest, d *Diags, at func(string) string) {
	index := map[string]int{}
	for i, s := range m.Spec.Services {
		index[s.Name] = i
	}
	state := map[string]int{}
	var visit func(name string)
	visit = func(name string) {
		state[name] = 1
		s := &m.Spec.Services[index[name]]
		kept := s.DependsOn[:0]
		for _, dep := range s.DependsOn {
			if state[dep] == 1 {
				d.Error(at(name), "%s and %s depend on each other (a cycle); the dependency on %s was dropped", name, dep, dep)
				continue
			}
			if state[dep] == 0 {
				visit(dep)
			}
			kept = append(kept, dep)
		}
		s.DependsOn = nilIfEmpty(kept)
		state[name] = 2
	}
	for _, s := range m.Spec.Services {
		if state[s.Name] == 0 {
			visit(s.Name)
		}
	}
}

func finalizeRoutes(m *manifest.Manifest, d *Diags, fallback string) {
	hosts := map[string]bool{}
	names := Names{}
	kept := m.Spec.Routes[:0]
	for _, r := range m.Spec.Routes {
		key := strings.ToLower(r.Hostname)
		switch {
		case hosts[key]:
			d.Error(fallback, "hostname %s is routed twice; Slipway routes each hostname to one service, so the second route was dropped", r.Hostname)
			continue
		case len(kept) >= manifest.MaxRoutes:
			d.Error(fallback, "Slipway allows at most %d routes; %s was dropped", manifest.MaxRoutes, r.Hostname)
			continue
		case r.Redirect != nil && strings.EqualFold(strings.TrimPrefix(strings.TrimPrefix(r.Redirect.To, "https://"), "http://"), r.Hostname):
			d.Error(fallback, "%s would redirect to itself; the redirect was dropped", r.Hostname)
			continue
		}
		hosts[key] = true
		if r.Name != "" {
			r.Name = names.Claim(r.Name)
		}
		kept = append(kept, r)
	}
	m.Spec.Routes = nilIfEmpty(kept)
}
