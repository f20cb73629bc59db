package manifest

import (
	"strconv"
	"strings"
)

// fieldKind tells a string field from an integer-or-reference one.
type fieldKind uint8

const (
	fieldString fieldKind = iota
	fieldInt
)

// field is one manifest value that could hold a reference. allowed says
// whether the spec accepts references there; set writes a rendered string
// back (nil where references are never rendered).
type field struct {
	path    string
	kind    fieldKind
	allowed bool
	value   string
	set     func(string)
	num     *Int
}

// walkFields visits every field of m that holds "${{" or an integer
// reference, in a fixed order, with its path and whether it accepts
// references. It is the one
// list of where references may appear, shared by validation and Render.
// File contents are skipped: they are mounted as written, never rendered.
// Variable tables are skipped too; ValidateReferencesFor checks them itself.
func walkFields(m *Manifest, visit func(*field)) {
	w := fieldWalker{visit: visit}
	w.text("", "metadata.name", m.Metadata.Name)
	s := &m.Spec
	for i := range s.Services {
		svc := &s.Services[i]
		p := "spec.services[" + strconv.Itoa(i) + "]"
		w.text(p, ".name", svc.Name)
		w.source(p, ".source", &svc.Source)
		w.integer(p, ".replicas", svc.Replicas, true)
		w.stringMap(p, ".environment", svc.Environment, true)
		w.list(p, ".command", svc.Command, true)
		w.list(p, ".arguments", svc.Arguments, true)
		if hc := svc.Healthcheck; hc != nil {
			hp := p + ".healthcheck"
			w.text(hp, ".type", hc.Type)
			w.integer(hp, ".port", hc.Port, true)
			w.template(hp, ".path", &hc.Path, true)
			w.list(hp, ".command", hc.Command, true)
			w.integer(hp, ".interval_seconds", hc.IntervalSeconds, true)
			w.integer(hp, ".timeout_seconds", hc.TimeoutSeconds, true)
			w.integer(hp, ".start_period_seconds", hc.StartPeriodSeconds, true)
			w.integer(hp, ".retries", hc.Retries, true)
		}
		if r := svc.Resources; r != nil {
			w.integer(p, ".resources.cpu_millis", r.CPUMillis, true)
			w.integer(p, ".resources.memory_bytes", r.MemoryBytes, true)
		}
		for j := range svc.Mounts {
			w.textElem(p, ".mounts", j, ".volume", svc.Mounts[j].Volume)
			w.textElem(p, ".mounts", j, ".target", svc.Mounts[j].Target)
		}
		for j := range svc.Files {
			w.textElem(p, ".files", j, ".target", svc.Files[j].Target)
			w.textElem(p, ".files", j, ".path", svc.Files[j].Path)
			w.textElem(p, ".files", j, ".mode", svc.Files[j].Mode)
		}
		w.secretMounts(p, ".secrets", svc.Secrets)
		for j, d := range svc.DependsOn {
			w.textElem(p, ".depends_on", j, "", d)
		}
		if r := svc.Rollout; r != nil {
			w.template(p, ".rollout.order", &r.Order, true)
			w.integer(p, ".rollout.monitor_seconds", r.MonitorSeconds, true)
		}
		if pg := svc.Postgres; pg != nil {
			w.template(p, ".postgres.database", &pg.Database, true)
			w.template(p, ".postgres.user", &pg.User, true)
			w.integer(p, ".postgres.port", pg.Port, true)
			w.template(p, ".postgres.password_secret", &pg.PasswordSecret, true)
		}
	}
	for i := range s.Volumes {
		w.textElem("", "spec.volumes", i, ".name", s.Volumes[i].Name)
	}
	for i := range s.Routes {
		r := &s.Routes[i]
		p := "spec.routes[" + strconv.Itoa(i) + "]"
		w.text(p, ".name", r.Name)
		w.template(p, ".hostname", &r.Hostname, true)
		w.text(p, ".service", r.Service)
		w.text(p, ".visibility", r.Visibility)
		if r.Redirect != nil {
			w.template(p, ".redirect.to", &r.Redirect.To, true)
		}
	}
	for i := range s.Jobs {
		j := &s.Jobs[i]
		p := "spec.jobs[" + strconv.Itoa(i) + "]"
		w.text(p, ".name", j.Name)
		w.text(p, ".service", j.Service)
		w.list(p, ".command", j.Command, true)
		w.text(p, ".run", j.Run)
		// A job's timeout, environment and secrets are declared like a
		// service's settings, so they accept references the same way.
		w.integer(p, ".timeout_seconds", j.TimeoutSeconds, true)
		w.text(p, ".volume_access", j.VolumeAccess)
		w.stringMap(p, ".environment", j.Environment, true)
		w.secretMounts(p, ".secrets", j.Secrets)
		w.template(p, ".schedule", &j.Schedule, true)
		w.text(p, ".concurrency", j.Concurrency)
	}
	for i := range s.Backups {
		b := &s.Backups[i]
		p := "spec.backups[" + strconv.Itoa(i) + "]"
		w.text(p, ".name", b.Name)
		w.text(p, ".volume", b.Volume)
		w.text(p, ".service", b.Service)
		w.template(p, ".schedule", &b.Schedule, true)
		w.integer(p, ".keep_last", b.KeepLast, true)
		w.integer(p, ".keep_days", b.KeepDays, true)
	}
	for i := range s.Secrets {
		d := &s.Secrets[i]
		p := "spec.secrets[" + strconv.Itoa(i) + "]"
		w.text(p, ".name", d.Name)
		w.text(p, ".generate.type", d.Generate.Type)
		w.text(p, ".generate.encoding", d.Generate.Encoding)
	}
	for _, name := range sortedKeysOf(s.Environments) {
		env := s.Environments[name]
		p := "spec.environments." + name
		w.text(p, "", name)
		w.text(p, ".branch", env.Branch)
		w.text(p, ".commit", env.Commit)
		w.text(p, ".promote_from", env.PromoteFrom)
		w.text(p, ".visibility", env.Visibility)
		w.text(p, ".rollback", env.Rollback)
	}
	if s.Previews != nil {
		w.text("", "spec.previews.visibility", s.Previews.Visibility)
	}
	if ms := s.Manifest; ms != nil {
		w.text("", "spec.manifest.path", ms.Path)
		w.repository("", "spec.manifest.repository", ms.Repository)
		if ms.Sync != nil {
			w.text("", "spec.manifest.sync.mode", ms.Sync.Mode)
		}
	}
	for i := range s.Exports {
		e := &s.Exports[i]
		p := "spec.exports[" + strconv.Itoa(i) + "]"
		w.text(p, ".service", e.Service)
		for j, a := range e.Applications {
			w.textElem(p, ".applications", j, "", a)
		}
	}
	for i := range s.Imports {
		im := &s.Imports[i]
		p := "spec.imports[" + strconv.Itoa(i) + "]"
		w.text(p, ".application", im.Application)
		w.text(p, ".service", im.Service)
		w.template(p, ".environment", &im.Environment, true)
	}
}

type fieldWalker struct {
	visit func(*field)
}

// The walker's methods take a path as base and suffix and join them only
// for a field it visits: one holding "${{" (a reference, a malformed one or
// an escape) or an integer reference. Every other field needs neither
// checking nor rendering, and skipping them keeps validation of large
// manifests cheap.

// text is a field that never accepts references.
func (w fieldWalker) text(base, suffix, v string) {
	if !strings.Contains(v, refOpen) {
		return
	}
	w.visit(&field{path: base + suffix, value: v})
}

// textElem is text for the element j of a list: base+suffix+"[j]"+rest.
func (w fieldWalker) textElem(base, suffix string, j int, rest, v string) {
	if !strings.Contains(v, refOpen) {
		return
	}
	w.visit(&field{path: base + suffix + "[" + strconv.Itoa(j) + "]" + rest, value: v})
}

func (w fieldWalker) template(base, suffix string, v *string, allowed bool) {
	if !strings.Contains(*v, refOpen) {
		return
	}
	w.visit(&field{path: base + suffix, value: *v, allowed: allowed, set: func(s string) { *v = s }})
}

func (w fieldWalker) integer(base, suffix string, v *Int, allowed bool) {
	if !v.IsRef() {
		return
	}
	w.visit(&field{path: base + suffix, kind: fieldInt, allowed: allowed, num: v})
}

func (w fieldWalker) list(base, suffix string, vs []string, allowed bool) {
	for i := range vs {
		if strings.Contains(vs[i], refOpen) {
			w.template(base+suffix, "["+strconv.Itoa(i)+"]", &vs[i], allowed)
		}
	}
}

// stringMap visits keys (never rendered: table keys) and values.
func (w fieldWalker) stringMap(base, suffix string, m map[string]string, allowed bool) {
	for k, v := range m {
		if !strings.Contains(k, refOpen) && !strings.Contains(v, refOpen) {
			continue
		}
		// Only maps holding references are sorted, for a stable error order.
		for _, k := range sortedKeysOf(m) {
			p := base + suffix + "." + k
			w.text(p, "", k)
			if v := m[k]; strings.Contains(v, refOpen) {
				w.visit(&field{path: p, value: v, allowed: allowed, set: func(s string) { m[k] = s }})
			}
		}
		return
	}
}

func (w fieldWalker) secretMounts(base, suffix string, ms []SecretMount) {
	for j := range ms {
		if !strings.Contains(ms[j].Name, refOpen) && !strings.Contains(ms[j].Target, refOpen) {
			continue
		}
		p := base + suffix + "[" + strconv.Itoa(j) + "]"
		w.template(p, ".name", &ms[j].Name, true)
		w.text(p, ".target", ms[j].Target)
	}
}

func (w fieldWalker) source(base, suffix string, src *Source) {
	path := base + suffix
	w.text(path, ".type", src.Type)
	w.template(path, ".image", &src.Image, true)
	w.repository(path, ".repository", src.Repository)
	if b := src.Build; b != nil {
		w.text(path, ".build.type", b.Type)
		w.template(path, ".build.dockerfile", &b.Dockerfile, true)
		w.template(path, ".build.context", &b.Context, true)
		w.stringMap(path, ".build.args", b.Args, true)
		w.template(path, ".build.target", &b.Target, true)
	}
}

func (w fieldWalker) repository(base, suffix string, r *Repository) {
	if r == nil {
		return
	}
	w.text(base, suffix+".url", r.URL)
	w.text(base, suffix+".branch", r.Branch)
	w.text(base, suffix+".commit", r.Commit)
}
