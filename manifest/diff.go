package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Change kinds.
const (
	ChangeAdded   = "added"
	ChangeRemoved = "removed"
	ChangeChanged = "changed"
)

// Change is one difference between two manifests, at a plan path such as
// services.web.replicas, services.web.files./etc/app/motd, jobs.order,
// secrets.<name> or routes.<hostname>. Before and After are display text:
// environment values, commands, arguments and file contents are redacted to
// their size and digest; variable values are not secret and are shown.
type Change struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"`
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
}

// leaf is one displayed setting of a flattened manifest.
type leaf struct {
	path  string
	value string
}

// entity is something added or removed as a whole (a service, a route, a
// job, ...): a plan lists it once with a summary instead of every setting.
type entity struct {
	path    string
	summary string
	leaves  []leaf
}

// topEntity holds the settings that belong to no service, route or job.
const topEntity = "application"

// Diff lists what changes from old to new, sorted by path. Either may be nil
// (an application that does not exist yet, or one being emptied). Defaults
// are applied to both first, so writing a default is no change, and list
// order is ignored where it means nothing.
func Diff(old, new *Manifest) []Change {
	before, after := flattenForDiff(old), flattenForDiff(new)
	var changes []Change
	for _, path := range unionKeys(before, after) {
		b, inOld := before[path]
		a, inNew := after[path]
		switch {
		case path == topEntity:
			changes = append(changes, diffLeaves(b.leaves, a.leaves)...)
		case !inOld:
			changes = append(changes, Change{Path: path, Kind: ChangeAdded, After: a.summary})
			if strings.HasPrefix(path, "environments.") {
				// A new block's settings are what the edit was about
				// (a variable's value), not that the block exists.
				changes = append(changes, diffLeaves(nil, a.leaves)...)
			}
		case !inNew:
			changes = append(changes, Change{Path: path, Kind: ChangeRemoved, Before: b.summary})
			if strings.HasPrefix(path, "environments.") {
				changes = append(changes, diffLeaves(b.leaves, nil)...)
			}
		default:
			changes = append(changes, diffLeaves(b.leaves, a.leaves)...)
		}
	}
	sort.SliceStable(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	return changes
}

func diffLeaves(old, new []leaf) []Change {
	bv := make(map[string]string, len(old))
	for _, l := range old {
		bv[l.path] = l.value
	}
	av := make(map[string]string, len(new))
	for _, l := range new {
		av[l.path] = l.value
	}
	var changes []Change
	for _, path := range unionKeys(bv, av) {
		b, inOld := bv[path]
		a, inNew := av[path]
		switch {
		case !inOld:
			changes = append(changes, Change{Path: path, Kind: ChangeAdded, After: a})
		case !inNew:
			changes = append(changes, Change{Path: path, Kind: ChangeRemoved, Before: b})
		case a != b:
			changes = append(changes, Change{Path: path, Kind: ChangeChanged, Before: b, After: a})
		}
	}
	return changes
}

func unionKeys[V any](a, b map[string]V) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// flattenForDiff turns a manifest into entities of display leaves.
func flattenForDiff(m *Manifest) map[string]*entity {
	// The application's own settings are compared leaf by leaf even when
	// one side is missing, so a new application lists them one by one.
	out := map[string]*entity{topEntity: {path: topEntity}}
	if m == nil {
		return out
	}
	c := cloneManifest(m)
	applyCanonicalDefaults(c)
	s := &c.Spec
	add := func(path, summary string) *entity {
		e := &entity{path: path, summary: summary}
		out[path] = e
		return e
	}
	top := add(topEntity, "")
	top.put("metadata.name", c.Metadata.Name)

	for i := range s.Services {
		svc := &s.Services[i]
		p := "services." + svc.Name
		e := add(p, serviceSummary(svc))
		e.source(p+".source", &svc.Source)
		e.put(p+".replicas", intText(svc.Replicas))
		e.secretMap(p+".environment", svc.Environment)
		e.put(p+".command", redactList(svc.Command))
		e.put(p+".arguments", redactList(svc.Arguments))
		if h := svc.Healthcheck; h != nil {
			hp := p + ".healthcheck"
			e.put(hp+".type", h.Type)
			e.put(hp+".port", intText(h.Port))
			e.put(hp+".path", h.Path)
			e.put(hp+".command", redactList(h.Command))
			e.put(hp+".interval_seconds", intText(h.IntervalSeconds))
			e.put(hp+".timeout_seconds", intText(h.TimeoutSeconds))
			e.put(hp+".start_period_seconds", intText(h.StartPeriodSeconds))
			e.put(hp+".retries", intText(h.Retries))
		}
		if r := svc.Resources; r != nil {
			e.put(p+".resources.cpu_millis", intText(r.CPUMillis))
			e.put(p+".resources.memory_bytes", intText(r.MemoryBytes))
		}
		for _, mt := range svc.Mounts {
			v := "volume " + mt.Volume
			if mt.ReadOnly {
				v += ", read-only"
			}
			e.put(p+".mounts."+mt.Target, v)
		}
		for _, f := range svc.Files {
			e.put(p+".files."+f.Target, fileSummary(f))
		}
		for _, sm := range svc.Secrets {
			e.put(p+".secrets."+sm.Target, "secret "+sm.Name)
		}
		e.put(p+".depends_on", strings.Join(sortedCopy(svc.DependsOn), ", "))
		if r := svc.Rollout; r != nil {
			e.put(p+".rollout.order", r.Order)
			e.put(p+".rollout.monitor_seconds", intText(r.MonitorSeconds))
		}
		e.put(p+".receives_telemetry", boolText(svc.ReceivesTelemetry))
		if pg := svc.Postgres; pg != nil {
			e.put(p+".postgres.database", pg.Database)
			e.put(p+".postgres.user", pg.User)
			e.put(p+".postgres.port", intText(pg.Port))
			e.put(p+".postgres.password_secret", pg.PasswordSecret)
		}
	}
	for _, v := range s.Volumes {
		add("volumes."+v.Name, "")
	}
	for i := range s.Routes {
		r := &s.Routes[i]
		p := "routes." + r.Hostname
		e := add(p, routeSummary(r))
		e.put(p+".name", r.Name)
		e.put(p+".service", r.Service)
		if r.Port != 0 {
			e.put(p+".port", strconv.Itoa(r.Port))
		}
		e.put(p+".visibility", r.Visibility)
		if rd := r.Redirect; rd != nil {
			e.put(p+".redirect.to", rd.To)
			if rd.Status != 0 {
				e.put(p+".redirect.status", strconv.Itoa(rd.Status))
			}
			if rd.PreservePath != nil {
				e.put(p+".redirect.preserve_path", strconv.FormatBool(*rd.PreservePath))
			}
		}
	}
	order := make([]string, len(s.Jobs))
	for i := range s.Jobs {
		j := &s.Jobs[i]
		order[i] = j.Name
		p := "jobs." + j.Name
		e := add(p, "service "+j.Service)
		e.put(p+".service", j.Service)
		e.put(p+".command", redactList(j.Command))
		e.put(p+".run", j.Run)
		e.put(p+".timeout_seconds", intText(j.TimeoutSeconds))
		e.put(p+".volume_access", j.VolumeAccess)
		e.put(p+".stop_service", boolText(j.StopService))
		e.put(p+".schedule", j.Schedule)
		e.put(p+".concurrency", j.Concurrency)
		e.secretMap(p+".environment", j.Environment)
		for _, sm := range j.Secrets {
			e.put(p+".secrets."+sm.Target, "secret "+sm.Name)
		}
	}
	top.put("jobs.order", strings.Join(order, ", "))
	for _, b := range s.Backups {
		p := "backups." + b.Name
		e := add(p, b.Kind()+" "+b.Subject())
		e.put(p+".volume", b.Volume)
		e.put(p+".service", b.Service)
		e.put(p+".schedule", b.Schedule)
		e.put(p+".keep_last", intText(b.KeepLast))
		e.put(p+".keep_days", intText(b.KeepDays))
	}
	for _, d := range s.Secrets {
		// A declaration's settings, never a value: values are not in manifests.
		p := "secrets." + d.Name
		add(p, generateSummary(d.Generate)).put(p, generateSummary(d.Generate))
	}
	for _, k := range sortedKeysOf(s.Variables) {
		top.put("variables."+k, s.Variables[k].String())
	}
	for _, name := range sortedKeysOf(s.Environments) {
		env := s.Environments[name]
		p := "environments." + name
		e := add(p, "declared")
		e.put(p+".branch", env.Branch)
		e.put(p+".commit", env.Commit)
		if env.Sync != nil {
			e.put(p+".sync", strconv.FormatBool(*env.Sync))
		}
		e.put(p+".promote_from", env.PromoteFrom)
		e.put(p+".visibility", env.Visibility)
		e.put(p+".rollback", env.Rollback)
		for _, k := range sortedKeysOf(env.Variables) {
			e.put(p+".variables."+k, env.Variables[k].String())
		}
	}
	if pv := s.Previews; pv != nil {
		top.put("previews.visibility", pv.Visibility)
		for _, k := range sortedKeysOf(pv.Variables) {
			top.put("previews.variables."+k, pv.Variables[k].String())
		}
	}
	if ms := s.Manifest; ms != nil {
		top.put("manifest.path", ms.Path)
		if r := ms.Repository; r != nil {
			top.put("manifest.repository", repositoryText(r))
		}
		if sy := ms.Sync; sy != nil {
			top.put("manifest.sync.mode", sy.Mode)
			if sy.IntervalSeconds != 0 {
				top.put("manifest.sync.interval_seconds", strconv.Itoa(sy.IntervalSeconds))
			}
		}
	}
	for _, ex := range s.Exports {
		p := "exports." + ex.Service
		e := add(p, "to "+strings.Join(ex.Applications, ", "))
		e.put(p+".applications", strings.Join(sortedCopy(ex.Applications), ", "))
		e.put(p+".previews", boolText(ex.Previews))
	}
	for _, im := range s.Imports {
		p := "imports." + im.Application + "." + im.Service
		e := add(p, "")
		e.put(p+".environment", im.Environment)
	}
	return out
}

// put records a setting; empty values are settings left unset.
func (e *entity) put(path, value string) {
	if value == "" {
		return
	}
	e.leaves = append(e.leaves, leaf{path: path, value: value})
}

// secretMap records environment values redacted: they often hold
// credentials. A value that is exactly one reference shows as written,
// since variable values are not secret.
func (e *entity) secretMap(path string, m map[string]string) {
	for _, k := range sortedKeysOf(m) {
		v := m[k]
		if _, ok := wholeReference(v); ok {
			e.put(path+"."+k, v)
			continue
		}
		e.put(path+"."+k, redact([]byte(v)))
	}
}

func (e *entity) source(path string, src *Source) {
	e.put(path+".type", src.Type)
	e.put(path+".image", src.Image)
	if r := src.Repository; r != nil {
		e.put(path+".repository", repositoryText(r))
	}
	if b := src.Build; b != nil {
		e.put(path+".build.type", b.Type)
		e.put(path+".build.dockerfile", b.Dockerfile)
		e.put(path+".build.context", b.Context)
		e.put(path+".build.target", b.Target)
		// Build arguments are not secret: Docker records them in the image.
		for _, k := range sortedKeysOf(b.Args) {
			e.put(path+".build.args."+k, b.Args[k])
		}
	}
}

// redact summarizes content by size and digest, so a plan shows that it
// changed without showing it.
func redact(b []byte) string {
	sum := sha256.Sum256(b)
	return fmt.Sprintf("(redacted: %d bytes, sha256:%s)", len(b), hex.EncodeToString(sum[:6]))
}

func redactList(vs []string) string {
	if vs == nil {
		return ""
	}
	// NUL cannot occur in the elements, so the joined form is unambiguous.
	return redact([]byte(strings.Join(vs, "\x00")))
}

func fileSummary(f File) string {
	var b strings.Builder
	if f.Path != "" {
		b.WriteString("repository file " + f.Path)
	} else {
		b.WriteString("content " + redact([]byte(f.Content)))
	}
	if f.Mode != "" {
		b.WriteString(", mode " + f.Mode)
	}
	return b.String()
}

func serviceSummary(svc *Service) string {
	switch {
	case svc.Source.Image != "":
		return "image " + svc.Source.Image
	case svc.Source.Repository != nil:
		return "built from " + repositoryText(svc.Source.Repository)
	}
	return ""
}

func routeSummary(r *Route) string {
	if r.Redirect != nil {
		return "redirect to " + r.Redirect.To
	}
	s := "service " + r.Service + " port " + strconv.Itoa(r.Port)
	if r.Visibility != "" {
		s += ", " + r.Visibility
	}
	return s
}

func generateSummary(g Generate) string {
	switch g.Type {
	case GenerateRSA:
		return fmt.Sprintf("generated rsa %d bits", g.Bits)
	case GenerateRandom:
		enc := g.Encoding
		if enc == "" {
			enc = EncodingHex
		}
		return fmt.Sprintf("generated random %d bytes, %s", g.Bytes, enc)
	}
	return "generated " + g.Type
}

func repositoryText(r *Repository) string {
	if r.Self {
		return RepositorySelf
	}
	s := r.URL
	if r.Branch != "" {
		s += " branch " + r.Branch
	}
	if r.Commit != "" {
		s += " commit " + r.Commit
	}
	return s
}

func intText(i *Int) string {
	if i == nil {
		return ""
	}
	if i.Ref != "" {
		return i.Ref
	}
	return strconv.FormatInt(i.N, 10)
}

func boolText(b bool) string {
	if !b {
		return ""
	}
	return "true"
}

func sortedCopy(vs []string) []string {
	c := append([]string(nil), vs...)
	sort.Strings(c)
	return c
}
